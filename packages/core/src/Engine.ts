/**
 * Composition: the engine's services over whatever ports the host provides, and every storage
 * port in memory. The bank comes from outside: `@cobro/bank-sandbox` (whose `SandboxEngine`
 * composes a complete sandbox engine, in memory or over any storage) or `@cobro/bank-bind`.
 */
import { Layer } from "effect"
import { Accounts } from "./accounts/Accounts.js"
import { Auth } from "./auth/Auth.js"
import { Balances } from "./balances/Balances.js"
import * as CredentialRepository from "./auth/CredentialRepository.js"
import * as Crypto from "./auth/Crypto.js"
import * as CustomerRepository from "./customers/CustomerRepository.js"
import { Customers } from "./customers/Customers.js"
import * as EngineConfig from "./EngineConfig.js"
import * as ExchangeRates from "./payments/ExchangeRates.js"
import * as FeePolicy from "./transfers/FeePolicy.js"
import { Idempotency } from "./Idempotency.js"
import * as IdempotencyRepository from "./IdempotencyRepository.js"
import * as MemoryCvuTable from "./bank/memoryCvuTable.js"
import * as MemoryDb from "./internal/memoryDb.js"
import { Jobs } from "./Jobs.js"
import { Ledger } from "./ledger/Ledger.js"
import { Onboarding } from "./accounts/Onboarding.js"
import * as LedgerRepository from "./ledger/LedgerRepository.js"
import * as Outbox from "./webhooks/Outbox.js"
import * as OutgoingTransferRepository from "./outgoing/OutgoingTransferRepository.js"
import { OutgoingTransfers } from "./outgoing/OutgoingTransfers.js"
import * as Settlements from "./outgoing/Settlement.js"
import { refundSettlement } from "./refunds/refundSettlement.js"
import { schedulePayoutSettlement } from "./schedules/payoutSettlement.js"
import { splitPayoutSettlement } from "./splits/splitPayoutSettlement.js"
import * as PartnerRepository from "./auth/PartnerRepository.js"
import * as RefundRepository from "./refunds/RefundRepository.js"
import { layerPublicRefunds, Refunds } from "./refunds/Refunds.js"
import * as PaymentRepository from "./payments/PaymentRepository.js"
import { Payments } from "./payments/Payments.js"
import * as ScheduleRepository from "./schedules/ScheduleRepository.js"
import { Schedules } from "./schedules/Schedules.js"
import * as SecondFactorRepository from "./auth/SecondFactorRepository.js"
import * as WebSessionRepository from "./auth/WebSessionRepository.js"
import * as SplitRepository from "./splits/SplitRepository.js"
import { Splits } from "./splits/Splits.js"
import * as Transactor from "./Transactor.js"
import * as TransferRepository from "./transfers/TransferRepository.js"
import { Transfers } from "./transfers/Transfers.js"
import * as UserRepository from "./accounts/UserRepository.js"
import * as WebhookDeliveryRepository from "./webhooks/WebhookDeliveryRepository.js"
import { WebhookDeliveries } from "./webhooks/WebhookDeliveries.js"
import * as TestClockRepository from "./clocks/TestClockRepository.js"

/** Every service of the engine; needs the ports (storage, bank, fees, rates, config). */
export const services = Layer.mergeAll(
  Payments.Default,
  Jobs.Default,
  Idempotency.Default,
  Balances.Default,
  WebhookDeliveries.Default
).pipe(
  Layer.provideMerge(Layer.mergeAll(Refunds.Default, layerPublicRefunds)),
  Layer.provideMerge(Transfers.Default),
  Layer.provideMerge(Splits.Default),
  Layer.provideMerge(Onboarding.Default),
  Layer.provideMerge(Layer.mergeAll(Accounts.Default, Auth.Default)),
  Layer.provideMerge(Schedules.Default),
  Layer.provideMerge(Customers.Default),
  Layer.provideMerge(
    OutgoingTransfers.Default.pipe(
      // Each owner of outgoing transfers registers how it hears their outcome.
      Layer.provide(Settlements.layer(refundSettlement, schedulePayoutSettlement, splitPayoutSettlement))
    )
  ),
  Layer.provideMerge(Ledger.Default)
)

/** Every storage port in memory, sharing one transactional store. */
export const layerMemoryStorage = Layer.mergeAll(
  PaymentRepository.layerMemory,
  CustomerRepository.layerMemory,
  UserRepository.layerMemory,
  CredentialRepository.layerMemory,
  PartnerRepository.layerMemory,
  ScheduleRepository.layerMemory,
  SplitRepository.layerMemory,
  OutgoingTransferRepository.layerMemory,
  RefundRepository.layerMemory,
  LedgerRepository.layerMemory,
  WebhookDeliveryRepository.layerMemory.pipe(Layer.provideMerge(Outbox.layerMemory)),
  TransferRepository.layerMemory,
  MemoryCvuTable.layerDirectory,
  IdempotencyRepository.layerMemory,
  TestClockRepository.layerMemory,
  SecondFactorRepository.layerMemory,
  WebSessionRepository.layerMemory,
  Transactor.layerMemory
).pipe(Layer.provide(MemoryCvuTable.layer.pipe(Layer.provideMerge(MemoryDb.layer))))

/** The storage ports the engine needs (in memory, SQLite or Postgres). */
export type Storage = Layer.Layer.Success<typeof layerMemoryStorage>

/** What `services` provides. */
export type Services = Layer.Layer.Success<typeof services>

/** What `services` needs: the storage ports, the bank, the second factor and the other ports. */
export type ServicesNeeds = Layer.Layer.Context<typeof services>

/** The ports `layerServices` provides beside the storage: fees, rates, WebCrypto and config. */
const ports = (settings: Partial<EngineConfig.EngineSettings>) =>
  Layer.mergeAll(
    FeePolicy.layer(),
    ExchangeRates.layerFixed(),
    Crypto.layerWebCrypto(settings.secretKey ?? Crypto.sandboxKey),
    EngineConfig.layer(settings)
  )

/** What `layerServices` provides beside `Services` and `Storage`. */
export type Ports = Layer.Layer.Success<ReturnType<typeof ports>>

/**
 * The engine's services over `storage`, with fees, rates, config and WebCrypto under
 * `settings.secretKey` (the public sandbox key when absent). The bank (`BankProvider`) and the
 * second factor (`SecondFactor`) come from outside, so several engine instances can share one
 * bank as they would share one real bank.
 */
export const layerServices = <E, R>(
  storage: Layer.Layer<Storage, E, R>,
  settings: Partial<EngineConfig.EngineSettings> = {}
): Layer.Layer<Services | Storage | Ports, E, R | Exclude<ServicesNeeds, Storage | Ports>> =>
  services.pipe(Layer.provideMerge(Layer.merge(storage, ports(settings))))
