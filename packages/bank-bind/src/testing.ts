/** A simulator of BIND PSP's API for tests and a developer's laptop (`@cobro/bank-bind/testing`). */
export * as BindSimulator from "./testing/BindSimulator.js"
