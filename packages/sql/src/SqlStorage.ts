/**
 * Every storage port of the engine over one `SqlClient` (Postgres or SQLite), after migrating
 * the database. The dialect packages (`@cobro/sql-pg`, `@cobro/sql-sqlite`) provide the client.
 */
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Migrator } from "@effect/sql"
import type { Outbox } from "@cobro/core"
import {
  type CredentialRepository,
  type CustomerRepository,
  type CvuDirectory,
  type IdempotencyRepository,
  type LedgerRepository,
  type OutgoingTransferRepository,
  type PartnerRepository,
  type PaymentRepository,
  type RefundRepository,
  type ScheduleRepository,
  type SecondFactorRepository,
  type WebSessionRepository,
  type SplitRepository,
  type TestClockRepository,
  type Transactor,
  type TransferRepository,
  type UserRepository,
  type WebhookDeliveryRepository
} from "@cobro/core/ports"
import { Layer } from "effect"
import * as Migrations from "./Migrations.js"
import * as SqlCredentialRepository from "./SqlCredentialRepository.js"
import * as SqlCustomerRepository from "./SqlCustomerRepository.js"
import * as SqlCvuDirectory from "./SqlCvuDirectory.js"
import * as SqlIdempotencyRepository from "./SqlIdempotencyRepository.js"
import * as SqlLedgerRepository from "./SqlLedgerRepository.js"
import * as SqlOutbox from "./SqlOutbox.js"
import * as SqlOutgoingTransferRepository from "./SqlOutgoingTransferRepository.js"
import * as SqlPartnerRepository from "./SqlPartnerRepository.js"
import * as SqlPaymentRepository from "./SqlPaymentRepository.js"
import * as SqlRefundRepository from "./SqlRefundRepository.js"
import * as SqlScheduleRepository from "./SqlScheduleRepository.js"
import * as SqlSecondFactorRepository from "./SqlSecondFactorRepository.js"
import * as SqlWebSessionRepository from "./SqlWebSessionRepository.js"
import * as SqlSplitRepository from "./SqlSplitRepository.js"
import * as SqlTestClockRepository from "./SqlTestClockRepository.js"
import * as SqlTransactor from "./SqlTransactor.js"
import * as SqlTransferRepository from "./SqlTransferRepository.js"
import * as SqlUserRepository from "./SqlUserRepository.js"
import * as SqlWebhookDeliveryRepository from "./SqlWebhookDeliveryRepository.js"

export type Storage =
  | PaymentRepository.PaymentRepository
  | UserRepository.UserRepository
  | LedgerRepository.LedgerRepository
  | Outbox.Outbox
  | TransferRepository.TransferRepository
  | CvuDirectory.CvuDirectory
  | Transactor.Transactor
  | CredentialRepository.CredentialRepository
  | PartnerRepository.PartnerRepository
  | CustomerRepository.CustomerRepository
  | ScheduleRepository.ScheduleRepository
  | SplitRepository.SplitRepository
  | OutgoingTransferRepository.OutgoingTransferRepository
  | RefundRepository.RefundRepository
  | IdempotencyRepository.IdempotencyRepository
  | WebhookDeliveryRepository.WebhookDeliveryRepository
  | TestClockRepository.TestClockRepository
  | SecondFactorRepository.SecondFactorRepository
  | WebSessionRepository.WebSessionRepository

/** The repositories alone (the database must already be migrated). */
export const repositories: Layer.Layer<Storage, never, SqlClient.SqlClient> = Layer.mergeAll(
  SqlPaymentRepository.layer,
  SqlUserRepository.layer,
  SqlLedgerRepository.layer,
  SqlOutbox.layer,
  SqlTransferRepository.layer,
  SqlCvuDirectory.layer,
  SqlTransactor.layer,
  SqlCredentialRepository.layer,
  SqlPartnerRepository.layer,
  SqlCustomerRepository.layer,
  SqlScheduleRepository.layer,
  SqlSplitRepository.layer,
  SqlOutgoingTransferRepository.layer,
  SqlRefundRepository.layer,
  SqlIdempotencyRepository.layer,
  SqlWebhookDeliveryRepository.layer,
  SqlTestClockRepository.layer,
  SqlSecondFactorRepository.layer,
  SqlWebSessionRepository.layer
)

/** Migrates the database, then provides every repository. */
export const layer: Layer.Layer<Storage, Migrator.MigrationError | SqlError, SqlClient.SqlClient> =
  Layer.provide(repositories, Layer.effectDiscard(Migrations.run))
