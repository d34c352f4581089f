export * from "./backends.js"
export * from "./migrationTests.js"
export * from "./runContract.js"
export type * from "./Scenario.js"
