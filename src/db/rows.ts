/**
 * @module
 * Row types of the raw D1 queries, derived from the drizzle tables in `schema.ts` so a column is
 * declared once: a row has the columns' SQL names (`workspace_id`), the value types drizzle infers
 * (`$inferSelect`: enums, nullability), and JSON columns as the text D1 hands back. Type-only:
 * nothing here (or in `schema.ts`) is imported at run time.
 */
import type { Table } from 'drizzle-orm'

type Columns<T extends Table> = T['_']['columns']

/** A JSON column comes back from D1 as its text (null stays null). */
type AsStored<V> = null extends V ? string | null : string

/** A row of `T` as `SELECT *` gives it. */
export type D1Row<T extends Table> = {
  [K in keyof T['$inferSelect'] &
    keyof Columns<T> as Columns<T>[K]['_']['name']]: Columns<T>[K]['_']['dataType'] extends 'json'
    ? AsStored<T['$inferSelect'][K]>
    : T['$inferSelect'][K]
}
