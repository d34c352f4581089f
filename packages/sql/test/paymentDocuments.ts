/**
 * Stored payment documents of every kind of content, as `cobro_payments.doc` holds them: nothing
 * optional, written before versions, paid twice with commission and taxes (once from a sender
 * the bank reported wrong), every optional field
 * with motive changes and another currency. Shared by the codec's and the row's tests.
 */
import { BankAccount } from "@cobro/core"

const cvu = BankAccount.makeCvu("0000003", "1604052115294")
const other = BankAccount.makeCvu("0000003", "1000000000007")

const transaction = (amount: string, overrides: Record<string, unknown> = {}) => ({
  address: cvu,
  amount,
  commission: 0.01,
  commission_amount: "15.00",
  commission_taxes: [{ tax_amount: 3.15, tax_rate: 0.21, tax_type: "IVA" }],
  commission_tax_amount: "3.15",
  creation_timestamp: "2026-11-25T04:42:26.935Z",
  credited_amount: "1481.85",
  currency: "ARS",
  network: "CVU",
  sender_address: "2851094349613873316490",
  taxes: [],
  tax_amount: "0.00",
  transaction_status: "PROCESSED",
  transaction_data: {
    PROCESSED: {
      amount: Number(amount),
      currency: "ARS",
      recipient: cvu,
      recipientCuit: "30712345671",
      recipientTitular: "Tienda",
      sender: "2851094349613873316490",
      senderCuit: "27000390904",
      senderTitular: "Pagador Sandbox",
      trxId: "SBX-00000000ad2775717f1a9fead37ad429"
    }
  },
  ...overrides
})

const base = {
  id: "VAR-u1-o-1",
  payment_status: "PENDING",
  price: { amount: 1500, currency: "ARS" },
  payment_options: ["transfer"],
  external_id: "o-1",
  payment_url: "https://pay.example/pay/VAR-u1-o-1",
  expiration_timestamp: "2026-11-30T04:42:26.930Z",
  creation_timestamp: "2026-11-25T04:42:26.930Z",
  last_modified_timestamp: "2026-11-25T04:42:26.935Z",
  is_deleted: false,
  user_id: "u1",
  quotes: [
    {
      currency: "ARS",
      network: "CVU",
      amount: "1500.00",
      amountReadable: "$ 1.500,00",
      address: cvu,
      alias: "palta.espejo.cinto"
    }
  ],
  transactions: [],
  metadata: { motive: [] },
  tags: [],
  cvu_released: false,
  creation_request: "{}"
}

export const documents: Record<string, Record<string, unknown>> = {
  "pending, nothing optional": { v: 1, ...base },
  "written before versions: no v, optional fields null": {
    ...base,
    webhook_url: null,
    redirect_url: null,
    motive: null,
    client_data: null,
    team_id: null,
    partner_id: null
  },
  "paid twice with commission, taxes and the totals": {
    v: 1,
    ...base,
    payment_status: "OVERPAID",
    transactions: [
      transaction("1500.00"),
      transaction("0.50", {
        address: other,
        credited_amount: "0.39",
        commission_amount: "0.01",
        commission_taxes: [],
        commission_tax_amount: "0.00",
        taxes: [
          { tax_amount: 0.05, tax_rate: 0.1, tax_type: "IIBB" },
          { tax_amount: 0.05, tax_rate: 0.1, tax_type: "GANANCIAS" }
        ],
        tax_amount: "0.10",
        // A sender the bank reported wrong (issue 45): the problems are kept with the transaction.
        sender_address: "123",
        sender_problems: [
          { field: "sender_address", reason: "must be 22 digits, got 3" },
          { field: "sender_cuit", reason: "must be 11 digits, got 5" }
        ]
      })
    ],
    transaction_fields: {
      amount: "1500.50",
      amountReadable: "$ 1.500,50",
      commission_amount: "15.01",
      credited_amount: "1482.24",
      currency: "ARS",
      network: "CVU",
      total_paid: { amount: "1500.50", currency: "ARS" }
    }
  },
  "every optional field, motive changes, another currency": {
    v: 1,
    ...base,
    price: { amount: 12.345678, currency: "USDT" },
    webhook_url: "https://merchant.example/hooks",
    redirect_url: "https://merchant.example/thanks",
    motive: "Cuota 3",
    client_data: { first_name: "Ana", email: "ana@example.com", dni: "30123456" },
    team_id: "team-7",
    partner_id: "par_1",
    tags: ["a", "b"],
    is_deleted: true,
    cvu_released: true,
    payment_status: "EXPIRED",
    metadata: {
      motive: [
        { value: "Cuota 2", modified_by: "u1", modification_timestamp: "2026-11-25T05:00:00.000Z" },
        {
          value: "Cuota 3",
          previous: "Cuota 2",
          modified_by: "u1",
          modification_timestamp: "2026-11-25T06:00:00.000Z"
        }
      ]
    }
  }
}
