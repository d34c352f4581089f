/**
 * `@cobro/core/ports`: the storage ports, for the packages that implement them (`@cobro/sql`, its
 * SQLite and Postgres adapters, `@cobro/storage-contract`) and the hosts that read a table
 * directly (the reference server's admin commands). Each has its in-memory adapter
 * (`layerMemory`, over `MemoryDb`); `Engine.layerMemoryStorage` is all of them.
 */

// The unit of work and the in-memory store the memory adapters share.
export * as MemoryDb from "./internal/memoryDb.js"
export * as StorageHealth from "./StorageHealth.js"
export * as Transactor from "./Transactor.js"

// Merchants, partners and their credentials.
export * as CredentialRepository from "./auth/CredentialRepository.js"
export * as PartnerRepository from "./auth/PartnerRepository.js"
export * as SecondFactorRepository from "./auth/SecondFactorRepository.js"
export * as WebSessionRepository from "./auth/WebSessionRepository.js"
export * as UserRepository from "./accounts/UserRepository.js"

// What is charged and paid out, and the CVUs it is charged on.
export * as CustomerRepository from "./customers/CustomerRepository.js"
export * as CvuDirectory from "./bank/CvuDirectory.js"
export * as OutgoingTransferRepository from "./outgoing/OutgoingTransferRepository.js"
export * as PaymentEncoding from "./payments/paymentEncoding.js"
export * as PaymentRepository from "./payments/PaymentRepository.js"
export * as RefundRepository from "./refunds/RefundRepository.js"
export * as ScheduleRepository from "./schedules/ScheduleRepository.js"
export * as SplitRepository from "./splits/SplitRepository.js"

// Money that moved: transfers in, the ledger, reconciliation's cursor.
export * as LedgerRepository from "./ledger/LedgerRepository.js"
export * as ReconciliationCursor from "./transfers/ReconciliationCursor.js"
export * as TransferRepository from "./transfers/TransferRepository.js"

// Requests answered once, events delivered, merchants' test clocks.
export * as IdempotencyRepository from "./IdempotencyRepository.js"
export * as TestClockRepository from "./clocks/TestClockRepository.js"
export * as WebhookDeliveryRepository from "./webhooks/WebhookDeliveryRepository.js"
export * as TrustedCodec from "./TrustedCodec.js"
