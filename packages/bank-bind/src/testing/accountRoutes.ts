/** The simulator's account routes: Crear CVU, Asignar alias, Eliminar CVU, Wallet's look-up. */
import { BankAccount } from "@cobro/core"
import type * as http from "node:http"
import { aliasOwner, holderOf, json, type State, text } from "./state.js"

/** CVUs issued by the simulator start with this PSP code. */
const PSP = "0000322"
const DAY = 86_400_000

/** Crear CVU: in the entity's CUIT; the same data again reactivates a released CVU. */
export const createCvu = (st: State, body: Record<string, unknown>, res: http.ServerResponse) => {
  const client_id = text(body["client_id"])
  const cuit = text(body["cuit"])
  const name = body["name"]
  if (client_id === undefined || cuit === undefined || typeof name !== "string" || name === "")
    return json(res, 400, { mensaje: "client_id, cuit y name son requeridos" })
  if (cuit !== st.entity.cuit) return json(res, 400, { mensaje: "El CUIT no corresponde a la entidad" })
  const same = [...st.cvus.values()].find((c) => c.client_id === client_id)
  if (same !== undefined) {
    if (same.open || same.name !== name) return json(res, 400, { mensaje: "El client_id ya existe" })
    same.open = true
    return json(res, 200, { cvu: same.cvu, label: same.alias, reactivated: true })
  }
  st.serial++
  const cvu = BankAccount.makeCvu(PSP, String(st.serial).padStart(13, "0"))
  st.cvus.set(cvu, { client_id, cvu, name, alias: null, aliasAssignedAt: null, open: true })
  json(res, 200, { cvu, label: null, reactivated: false })
}

/** Asignar alias, with the refusals BIND documents (Wallet's "Asignar alias", 422). */
export const assignAlias = (st: State, body: Record<string, unknown>, res: http.ServerResponse) => {
  const entry = st.cvus.get(text(body["cvu"]) ?? "")
  const label = body["label"]
  if (entry === undefined || !entry.open || text(body["cuit"]) !== st.entity.cuit)
    return json(res, 422, { mensaje: "No existe el CVU" })
  if (typeof label !== "string" || !BankAccount.isValidAlias(label) || st.faults.refuseAliasFormat.has(label))
    return json(res, 422, { mensaje: "El formato del alias es incorrecto" })
  const owner = aliasOwner(st, label)
  if (owner !== undefined && owner !== entry.cvu)
    return json(res, 422, { mensaje: "El alias ya se encuentra en uso" })
  if (
    st.faults.refuseAliasChange.has(entry.cvu) ||
    (entry.aliasAssignedAt !== null && st.now() - entry.aliasAssignedAt < DAY)
  )
    return json(res, 422, { mensaje: "El alias se intenta modificar más de una vez en 24 horas" })
  entry.alias = label
  entry.aliasAssignedAt = st.now()
  json(res, 200, { cvu: entry.cvu, label, reactivated: false })
}

/** Eliminar CVU: `cvu/cuit` after the path; an unknown or closed one is 404. */
export const releaseCvu = (st: State, rest: string, res: http.ServerResponse) => {
  const [cvu = "", cuit = ""] = rest.split("/").map(decodeURIComponent)
  const entry = st.cvus.get(cvu)
  if (entry === undefined || !entry.open || cuit !== st.entity.cuit)
    return json(res, 404, { mensaje: "CVU inexistente" })
  entry.open = false
  return json(res, 200, { cvu })
}

export const lookup = (st: State, url: URL, res: http.ServerResponse) => {
  const param = (k: string) => {
    const v = url.searchParams.get(k)
    return v === null || v === "" || v === "null" ? undefined : v
  }
  const number = param("cbuOrCvu")
  const alias = param("alias")
  if (number === undefined && alias === undefined)
    return json(res, 400, { mensaje: "Un campo requerido no fue enviado" })
  const holder = holderOf(st, number ?? alias!)
  if (holder === undefined)
    return number !== undefined
      ? json(res, 404, { mensaje: "El CBU/CVU no es válido" })
      : json(res, 422, { mensaje: "El alias ingresado no existe" })
  const own = st.cvus.get(holder.cbu)
  json(res, 200, {
    cuentaId: 1,
    cbucvu: holder.cbu,
    alias: holder.alias ?? null,
    cuitCuil: holder.cuit,
    nombre: own !== undefined ? st.entity.name : holder.name,
    bancoNombre: own !== undefined ? "BANCO INDUSTRIAL S.A." : "OTRO BANCO",
    activo: true,
    billeteraId: 1,
    nombreCvu: holder.name,
    entidad: own !== undefined ? st.entity.name : holder.name,
    moneda: "ARS"
  })
}
