/** The client's routes for the sandbox's faucet, clock and bank accounts: `Cobro` delegates to these, each taking the openapi-fetch client first. */
import type { Client } from "openapi-fetch"
import type { paths } from "../../generated/openapi.js"
import { type CallOptions, callInit, unwrap } from "../call.js"
import type { RequestBody } from "../routeTypes.js"

export function faucet(
  api: Client<paths>,
  cvu: string,
  body: RequestBody<"/cvu/{cvu}/faucet", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/cvu/{cvu}/faucet", { params: { path: { cvu } }, body, ...callInit(options) }))
}

export function getClock(api: Client<paths>, options?: CallOptions) {
  return unwrap(api.GET("/sandbox/clock", { ...callInit(options) }))
}

export function advanceClock(
  api: Client<paths>,
  body: RequestBody<"/sandbox/clock/advance", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/sandbox/clock/advance", { body, ...callInit(options) }))
}

export function registerBankAccount(
  api: Client<paths>,
  body: RequestBody<"/sandbox/bank-accounts", "post">,
  options?: CallOptions
) {
  return unwrap(api.POST("/sandbox/bank-accounts", { body, ...callInit(options) }))
}

export function listBankAccounts(api: Client<paths>, options?: CallOptions) {
  return unwrap(api.GET("/sandbox/bank-accounts", { ...callInit(options) }))
}

export function getBankAccount(api: Client<paths>, cbu: string, options?: CallOptions) {
  return unwrap(api.GET("/sandbox/bank-accounts/{cbu}", { params: { path: { cbu } }, ...callInit(options) }))
}

export function removeBankAccount(api: Client<paths>, cbu: string, options?: CallOptions) {
  return unwrap(
    api.DELETE("/sandbox/bank-accounts/{cbu}", { params: { path: { cbu } }, ...callInit(options) })
  )
}

export function listBankAccountTransfers(api: Client<paths>, cbu: string, options?: CallOptions) {
  return unwrap(
    api.GET("/sandbox/bank-accounts/{cbu}/transfers", {
      params: { path: { cbu } },
      ...callInit(options)
    })
  )
}
