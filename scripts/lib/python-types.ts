/**
 * The Python client's generated types (clients/python/cutout/_schema.py): one TypedDict per schema
 * of /openapi.json, with every property the document names. No maintained OpenAPI generator for
 * Python installs here (they come from PyPI or fetch a jar at run time), so this small one
 * (JSON schema → Python annotations) does the mechanical part, as openapi-typescript does for
 * the TypeScript SDK; the client around it is written by hand (clients/python/cutout/client.py).
 */

export interface JsonSchema {
  $ref?: string
  type?: string | string[]
  format?: string
  enum?: unknown[]
  const?: unknown
  items?: JsonSchema
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  oneOf?: JsonSchema[]
  anyOf?: JsonSchema[]
  allOf?: JsonSchema[]
  description?: string
}

export const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1)
const pascal = (name: string) => name.replace(/(^|[^A-Za-z0-9])([a-z0-9])/g, (_, __, c: string) => c.toUpperCase())
const literal = (value: unknown) =>
  typeof value === 'string'
    ? JSON.stringify(value)
    : value === null
      ? 'None'
      : typeof value === 'boolean'
        ? value
          ? 'True'
          : 'False'
        : String(value)

/** The TypedDict classes of one document, in an order where every base comes before its subclass. */
export class PythonTypes {
  readonly classes: string[] = []
  /** Every public class defined: the component schemas and the inline objects named after them. */
  readonly names: string[] = []
  readonly #taken: Set<string>

  constructor(readonly schemas: Record<string, JsonSchema>) {
    this.#taken = new Set(Object.keys(schemas))
  }

  /** The Python annotation of `schema`; an inline object becomes a class named after `hint`. */
  annotation(schema: JsonSchema | undefined, hint: string): string {
    if (!schema) return 'Any'
    if (schema.$ref) return refName(schema.$ref)
    const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []
    const nullable = types.includes('null')
    const base = this.#nonNull({ ...schema, type: types.filter((t) => t !== 'null') }, hint)
    return nullable && base !== 'None' ? `${base} | None` : base
  }

  #nonNull(schema: JsonSchema, hint: string): string {
    const variants = schema.oneOf ?? schema.anyOf
    if (variants) return unique(variants.map((v, i) => this.annotation(v, `${hint}${i + 1}`))).join(' | ')
    // `allOf: [$ref, {description}]` is how a described reference is spelled: the type referenced.
    const shaped = schema.allOf?.filter((part) => part.$ref || part.properties || part.type)
    if (shaped?.length === 1 && shaped[0].$ref && !schema.properties) return refName(shaped[0].$ref)
    if (schema.allOf) return this.#object(schema, hint)
    if (schema.const !== undefined) return `Literal[${literal(schema.const)}]`
    if (schema.enum) return `Literal[${schema.enum.map(literal).join(', ')}]`
    const type = (schema.type as string[])[0]
    if ((schema.type as string[]).length > 1)
      return (schema.type as string[]).map((t) => this.#nonNull({ ...schema, type: [t] }, hint)).join(' | ')
    switch (type) {
      case 'string':
        return schema.format === 'binary' ? 'bytes' : 'str'
      case 'integer':
        return 'int'
      case 'number':
        return 'float'
      case 'boolean':
        return 'bool'
      case 'array':
        return `list[${this.annotation(schema.items, `${hint}Item`)}]`
      case 'object':
        return this.#object(schema, hint)
      default:
        return 'Any'
    }
  }

  #object(schema: JsonSchema, hint: string): string {
    if (!schema.properties && !schema.allOf) {
      const extra = schema.additionalProperties
      return `dict[str, ${typeof extra === 'object' ? this.annotation(extra, `${hint}Value`) : 'Any'}]`
    }
    const name = this.#freshName(hint)
    this.define(name, schema)
    return name
  }

  #freshName(hint: string): string {
    let name = pascal(hint)
    for (let i = 2; this.#taken.has(name); i++) name = `${pascal(hint)}${i}`
    this.#taken.add(name)
    return name
  }

  /**
   * `class Name(Base, total=False)` with the required keys in a `_NameRequired` base: Python 3.10
   * has no `Required[...]`, and this split is how a TypedDict says which keys are always there.
   */
  define(name: string, schema: JsonSchema): void {
    const bases = (schema.allOf ?? []).filter((s) => s.$ref).map((s) => refName(s.$ref as string))
    const own = [schema, ...(schema.allOf ?? []).filter((s) => !s.$ref)]
    const required = new Set(own.flatMap((s) => s.required ?? []))
    const fields = own.flatMap((s) =>
      Object.entries(s.properties ?? {}).map(([key, prop]) => ({
        key,
        type: this.annotation(prop, `${name}${pascal(key)}`),
        doc: prop.description,
      })),
    )
    const body = (list: typeof fields) =>
      list.length
        ? list.flatMap((f) => [
            ...(f.doc ? [`    #: ${f.doc.replace(/\s+/g, ' ').slice(0, 200)}`] : []),
            `    ${f.key}: ${f.type}`,
          ])
        : ['    pass']
    const mandatory = fields.filter((f) => required.has(f.key))
    const optional = fields.filter((f) => !required.has(f.key))
    const doc = schema.description ? [`    """${schema.description.replace(/\s+/g, ' ').replace(/"/g, "'")}"""`] : []
    let parent = bases.length ? bases.join(', ') : 'TypedDict'
    if (mandatory.length) {
      this.classes.push(`class _${name}Required(${parent}):\n${body(mandatory).join('\n')}\n`)
      parent = `_${name}Required`
    }
    this.names.push(name)
    this.classes.push(`class ${name}(${parent}, total=False):\n${[...doc, ...body(optional)].join('\n')}\n`)
  }
}

const unique = (list: string[]) => [...new Set(list)]

/** Component schemas in dependency order: a schema `allOf` another comes after it. */
export function orderedSchemas(schemas: Record<string, JsonSchema>): string[] {
  const done = new Set<string>()
  const order: string[] = []
  const visit = (name: string) => {
    if (done.has(name)) return
    done.add(name)
    for (const part of schemas[name].allOf ?? []) if (part.$ref) visit(refName(part.$ref))
    order.push(name)
  }
  for (const name of Object.keys(schemas).sort()) visit(name)
  return order
}
