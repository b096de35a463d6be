/**
 * @module
 * The catalog limits without a schema library: the web page (web/src/catalog.ts) bundles them, and
 * zod in a page bundle probes `new Function`, which the page's CSP refuses (and reports).
 * src/contract/catalog.ts re-exports them beside its schemas.
 */

/** References per catalog image (SPEC.md §8): front, back, side, detail. */
export const MAX_REFERENCES = 4
/** The largest seed of a catalog image or a try-on. */
export const MAX_SEED = 4_294_967_295
