import { runContract, sqlite } from "../src/index.js"

runContract(sqlite)
