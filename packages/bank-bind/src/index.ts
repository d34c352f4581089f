export * as BindBank from "./BindBank.js"
export * as BindConfig from "./BindConfig.js"
export * as BindWebhook from "./BindWebhook.js"
export * as OriginId from "./OriginId.js"
