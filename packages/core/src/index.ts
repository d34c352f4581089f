/**
 * `@cobro/core`: what a host composes and calls. The storage ports, for the packages that
 * implement them, are `@cobro/core/ports`; the sandbox bank is `@cobro/bank-sandbox`.
 */

// Composition: the engine's services over the ports, and its settings.
export * as Engine from "./Engine.js"
export * as EngineConfig from "./EngineConfig.js"
export * as Jobs from "./Jobs.js"

// The vocabulary every call speaks: money, ids, errors, wire formats, pages, spans.
export * as Errors from "./Errors.js"
export * as Ids from "./Ids.js"
export * as Metrics from "./Metrics.js"
export * as Money from "./Money.js"
export * as Page from "./Page.js"
export * as RealTime from "./RealTime.js"
export * as Spans from "./Spans.js"
export * as Wire from "./Wire.js"

// Merchants, partners and who is calling.
export * as Accounts from "./accounts/Accounts.js"
export * as Auth from "./auth/Auth.js"
export * as Credential from "./auth/Credential.js"
export * as Onboarding from "./accounts/Onboarding.js"
export * as Partner from "./auth/Partner.js"
export * as Principal from "./Principal.js"
export * as SecondFactors from "./accounts/SecondFactors.js"
export * as WebSessions from "./accounts/WebSessions.js"
export * as User from "./accounts/User.js"

// Charging: payments, customers with a fixed CVU, split payments, and requests answered once.
export * as Customer from "./customers/Customer.js"
export * as Customers from "./customers/Customers.js"
export * as Idempotency from "./Idempotency.js"
export * as Payment from "./payments/Payment.js"
export * as PaymentRequest from "./payments/PaymentRequest.js"
export * as Payments from "./payments/Payments.js"
export * as Split from "./splits/Split.js"
export * as Splits from "./splits/Splits.js"

// Paying out: schedules, refunds and the transfers they send.
export * as OutgoingTransfer from "./outgoing/OutgoingTransfer.js"
export * as OutgoingTransfers from "./outgoing/OutgoingTransfers.js"
export * as Refund from "./refunds/Refund.js"
export * as Refunds from "./refunds/Refunds.js"
export * as Schedule from "./schedules/Schedule.js"
export * as Schedules from "./schedules/Schedules.js"

// Money that moved: transfers in and their reconciliation, the ledger, balances.
export * as Balances from "./balances/Balances.js"
export * as Ledger from "./ledger/Ledger.js"
export * as LedgerAccount from "./ledger/LedgerAccount.js"
export * as MerchantMoney from "./balances/MerchantMoney.js"
export * as Reconciliation from "./transfers/Reconciliation.js"
export * as Transfers from "./transfers/Transfers.js"

// Events: the outbox and the deliveries of merchants' webhooks.
export * as IpAddress from "./webhooks/IpAddress.js"
export * as Outbox from "./webhooks/Outbox.js"
export * as WebhookDeliveries from "./webhooks/WebhookDeliveries.js"
export * as WebhookDestination from "./webhooks/WebhookDestination.js"

// The ports a host provides beside the storage: the bank, the second factor, keys, fees, rates,
// mail, authentication, and the merchants' clocks.
export * as Authenticator from "./auth/Authenticator.js"
export * as BankAccount from "./bank/BankAccount.js"
export * as BankProvider from "./bank/BankProvider.js"
export * as Crypto from "./auth/Crypto.js"
export * as DueScope from "./clocks/DueScope.js"
export * as ExchangeRates from "./payments/ExchangeRates.js"
export * as FeePolicy from "./transfers/FeePolicy.js"
export * as Mailer from "./auth/Mailer.js"
export * as MerchantClocks from "./clocks/MerchantClocks.js"
export * as SecondFactor from "./auth/SecondFactor.js"
