/**
 * A complete sandbox engine: core's services (`Engine.layerServices`) with the sandbox bank, the
 * faucet and the sandbox's second factor, in memory or over any storage.
 */
import { type BankProvider, Engine, type EngineConfig, SecondFactor } from "@cobro/core"
import { Layer } from "effect"
import { Faucet } from "./Faucet.js"
import * as SandboxBank from "./SandboxBank.js"

/** The sandbox services (the faucet) on top of `Engine.services`; needs `SandboxBank`. */
export const sandboxServices: Layer.Layer<
  Faucet | Engine.Services,
  never,
  SandboxBank.SandboxBank | Engine.ServicesNeeds
> = Faucet.Default.pipe(Layer.provideMerge(Engine.services))

/**
 * The sandbox engine over `storage` (`Engine.layerServices` and the faucet); the bank
 * (`SandboxBank.layer`) and the second factor (`SecondFactor.layerSandbox`) come from outside, so
 * several engine instances can share one sandbox bank as they would share one real bank.
 */
export const layerSandboxServices = <E, R>(
  storage: Layer.Layer<Engine.Storage, E, R>,
  settings: Partial<EngineConfig.EngineSettings> = {}
): Layer.Layer<
  Faucet | Engine.Services | Engine.Storage | Engine.Ports,
  E,
  R | SandboxBank.SandboxBank | Exclude<Engine.ServicesNeeds, Engine.Storage | Engine.Ports>
> => Faucet.Default.pipe(Layer.provideMerge(Engine.layerServices(storage, settings)))

/** What a complete sandbox engine provides. */
export type Sandbox =
  | Faucet
  | Engine.Services
  | Engine.Storage
  | Engine.Ports
  | SandboxBank.SandboxBank
  | BankProvider.BankProvider
  | SecondFactor.SecondFactor
  | SecondFactor.SandboxSecondFactor

/** A complete sandbox engine over `storage`, with its own sandbox bank and second factor. */
export const layerSandbox = <E, R>(
  storage: Layer.Layer<Engine.Storage, E, R>,
  settings: Partial<EngineConfig.EngineSettings> = {}
): Layer.Layer<Sandbox, E, R | Exclude<Engine.ServicesNeeds, Sandbox>> =>
  layerSandboxServices(storage, settings).pipe(
    Layer.provideMerge(Layer.mergeAll(SandboxBank.layer, SecondFactor.layerSandbox))
  )

/** A complete sandbox engine in memory. */
export const layerMemory = (
  settings: Partial<EngineConfig.EngineSettings> = {}
): Layer.Layer<Sandbox, never, Exclude<Engine.ServicesNeeds, Sandbox>> =>
  layerSandbox(Engine.layerMemoryStorage, settings)
