export * as PgStorage from "./PgStorage.js"
