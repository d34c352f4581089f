/**
 * The CVU directory (`cobro_cvu_directory`, 0009) kept by the database itself: a trigger on each
 * owner's table enters the CVU of a payment, customer or split payment inserted, and moves a
 * customer's entry when its CVU changes, inside the statement that writes the owner. Storing a
 * payment is then one INSERT, with no transaction around it, and its entry cannot be missing:
 * a CVU the directory already holds fails the owner's statement with the directory's unique
 * violation (read by the adapters as `CvuTaken`), and nothing of it stays.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Each owner's table, its owner kind and the column of its id. */
const owners = [
  { table: "cobro_payments", owner: "payment", id: "id" },
  { table: "cobro_customers", owner: "customer", id: "customer_id" },
  { table: "cobro_split_payments", owner: "split_payment", id: "split_payment_id" }
] as const

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const enter = (
    owner: string,
    id: string
  ) => `INSERT INTO cobro_cvu_directory (cvu, owner, owner_id, user_id)
      VALUES (NEW.cvu, '${owner}', NEW.${id}, NEW.user_id);`

  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function* () {
        for (const { id, owner, table } of owners) {
          // A customer moved to a new CVU leaves its old one: only customers change CVU.
          const moved =
            owner === "customer"
              ? `IF TG_OP = 'UPDATE' THEN
                  DELETE FROM cobro_cvu_directory WHERE cvu = OLD.cvu;
                END IF;`
              : ""
          yield* sql.unsafe(`CREATE FUNCTION ${table}_cvu_directory() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              ${moved}
              ${enter(owner, id)}
              RETURN NULL;
            END $$`)
          yield* sql.unsafe(`CREATE TRIGGER ${table}_cvu_directory AFTER INSERT ON ${table}
            FOR EACH ROW EXECUTE FUNCTION ${table}_cvu_directory()`)
        }
        yield* sql.unsafe(`CREATE TRIGGER cobro_customers_cvu_directory_moved AFTER UPDATE OF cvu ON cobro_customers
          FOR EACH ROW WHEN (OLD.cvu IS DISTINCT FROM NEW.cvu) EXECUTE FUNCTION cobro_customers_cvu_directory()`)
      }),
    orElse: () =>
      Effect.gen(function* () {
        for (const { id, owner, table } of owners) {
          yield* sql.unsafe(`CREATE TRIGGER ${table}_cvu_directory AFTER INSERT ON ${table}
            BEGIN ${enter(owner, id)} END`)
        }
        yield* sql.unsafe(`CREATE TRIGGER cobro_customers_cvu_directory_moved AFTER UPDATE OF cvu ON cobro_customers
          WHEN OLD.cvu IS NOT NEW.cvu
          BEGIN
            DELETE FROM cobro_cvu_directory WHERE cvu = OLD.cvu;
            ${enter("customer", "customer_id")}
          END`)
      })
  })
})
