export * from "./backends.js"
export * from "./runContract.js"
export type * from "./Scenario.js"
