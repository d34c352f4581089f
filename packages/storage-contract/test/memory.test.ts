import { memory, runContract } from "../src/index.js"

runContract(memory)
