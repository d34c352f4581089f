/**
 * Composition: the engine's services over whatever ports the host provides, and a complete
 * in-memory sandbox engine for tests and embedding without a database.
 */
import { Layer } from "effect"
import * as EngineConfig from "./EngineConfig.js"
import * as ExchangeRates from "./ExchangeRates.js"
import { Faucet } from "./Faucet.js"
import * as FeePolicy from "./FeePolicy.js"
import * as MemoryDb from "./internal/memoryDb.js"
import { Jobs } from "./Jobs.js"
import { Ledger } from "./Ledger.js"
import * as LedgerRepository from "./LedgerRepository.js"
import * as Outbox from "./Outbox.js"
import * as PaymentRepository from "./PaymentRepository.js"
import { Payments } from "./Payments.js"
import * as SandboxBank from "./SandboxBank.js"
import * as Transactor from "./Transactor.js"
import * as TransferRepository from "./TransferRepository.js"
import { Transfers } from "./Transfers.js"
import * as UserRepository from "./UserRepository.js"

/** Every service of the engine; needs the ports (storage, bank, fees, rates, config). */
export const services = Layer.mergeAll(Payments.Default, Jobs.Default).pipe(
  Layer.provideMerge(Transfers.Default),
  Layer.provideMerge(Ledger.Default)
)

/** The sandbox services (the faucet) on top of `services`; needs `SandboxBank`. */
export const sandboxServices = Faucet.Default.pipe(Layer.provideMerge(services))

/** Every storage port in memory, sharing one transactional store. */
export const layerMemoryStorage = Layer.mergeAll(
  PaymentRepository.layerMemory,
  UserRepository.layerMemory,
  LedgerRepository.layerMemory,
  Outbox.layerMemory,
  TransferRepository.layerMemory,
  Transactor.layerMemory
).pipe(Layer.provide(MemoryDb.layer))

/** A complete sandbox engine in memory: services, storage, sandbox bank, fees, rates, config. */
export const layerMemory = (settings: Partial<EngineConfig.EngineSettings> = {}) =>
  sandboxServices.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        layerMemoryStorage,
        SandboxBank.layer,
        FeePolicy.layer(),
        ExchangeRates.layerFixed(),
        EngineConfig.layer(settings)
      )
    )
  )
