/**
 * @module
 * A multipart/form-data body read as a stream (docs/decisions.md, Streamed multipart bodies), with
 * multipasta's parser: text parts are collected (small, capped), each file part's bytes go to a
 * {@link FileSink} as they arrive, and the body is read no faster than the sinks take it, so a
 * 50 MB image is never whole in the Worker's memory (128 MB per isolate). Strict (Strict
 * multipart): a part the operation does not list is refused as soon as its headers arrive, naming
 * it, and reading stops there.
 */
import * as Multipasta from 'multipasta'
import { ApiError, issueToApiError } from '../errors'

/** Where one file part's bytes go. */
export interface FileSink {
  /** Takes the next chunk; the body is not read further until it resolves. Throws to refuse the part. */
  write(chunk: Uint8Array): Promise<void>
  /** The part ended. */
  close(): Promise<void>
  /** The request failed before the part ended: nothing of it may stay. */
  abort(): Promise<void>
}

export interface StreamedFormSpec {
  /** The text parts the operation lists, each at most once. */
  texts: readonly string[]
  /** The file parts it lists, each with how many may come. */
  files: Readonly<Record<string, number>>
  /** Where the `index`th file part called `name` goes. */
  openFile(name: string, index: number): FileSink
}

export interface StreamedForm {
  /** Each text part sent, by name. */
  texts: Record<string, string>
  /** How many file parts of each name came (every one went to its sink and was closed). */
  files: Record<string, number>
}

/** A text part longer than this is not a field of ours (options are well under 1 KB). */
const MAX_TEXT_BYTES = 64 * 1024
/** More parts than any operation lists, with room for the strict refusal to name the extra one. */
const MAX_PARTS = 16

const MULTIPART = /^multipart\/form-data\s*;/i

/** Whether a request's body is a form (multipart or url-encoded), as zod-openapi's gate lets through. */
export const isFormBody = (contentType: string | undefined) =>
  /^(multipart\/form-data|application\/x-www-form-urlencoded)\b/i.test(contentType ?? '')

/**
 * Reads `request`'s multipart body part by part. Throws a 4xx problem for a body that is not
 * multipart/form-data (415), is malformed or ends early, has a part `spec` does not list, or a
 * part more often than listed; a sink's own error (the image too large, say) stops reading at
 * once. Whatever it throws, the sink of a part still open is aborted and the body canceled.
 */
export async function readStreamedForm(request: Request, spec: StreamedFormSpec): Promise<StreamedForm> {
  const contentType = request.headers.get('content-type') ?? ''
  if (!MULTIPART.test(contentType)) {
    throw new ApiError(
      'unsupported_media',
      'Expected a multipart/form-data body (or JSON where the operation takes it)',
    )
  }
  if (!request.body) throw new ApiError('invalid_input', 'Expected a multipart/form-data body but it was empty')
  const state = new FormState(spec)
  const parser = Multipasta.make({
    headers: { 'content-type': contentType },
    isFile: (info) => info.filename !== undefined,
    maxParts: MAX_PARTS,
    maxFieldSize: MAX_TEXT_BYTES,
    onField: (info, value) => state.field(info, value),
    onFile: (info) => state.file(info),
    onError: (error) => state.fail(parseError(error, state.parts + 1)),
    onDone: () => state.done(),
  })
  const reader = request.body.getReader()
  try {
    for (;;) {
      const read = await readChunk(reader)
      if (read.done) break
      parser.write(read.value)
      await state.flush()
      if (state.finished) break
    }
    if (!state.finished) {
      parser.end()
      await state.flush()
    }
    if (!state.finished) throw new ApiError('invalid_input', 'The multipart body ended before its closing boundary')
    return state.result()
  } catch (err) {
    await state.abort()
    // Stop reading: what is left of the body (the rest of a too-large image) is never taken in.
    await reader.cancel().catch(() => undefined)
    throw err
  }
}

async function readChunk(reader: ReadableStreamDefaultReader<Uint8Array>) {
  try {
    return await reader.read()
  } catch (cause) {
    throw new ApiError('invalid_input', 'The request body could not be read to its end', { cause })
  }
}

/** What one body has sent so far; the parser's callbacks are synchronous, the sinks' writes are not. */
class FormState {
  readonly texts: Record<string, string> = {}
  readonly files: Record<string, number> = {}
  /** How many parts have come so far (the parser reports an error in the next one). */
  parts = 0
  finished = false
  /** The sinks of file parts whose end is not yet written. */
  private readonly open = new Set<FileSink>()
  /** Chunks parsed but not yet written, each with its part's sink (`null`: the part ended). */
  private pending: { sink: FileSink; chunk: Uint8Array | null }[] = []
  private failure: ApiError | null = null

  constructor(private readonly spec: StreamedFormSpec) {}

  field(info: Multipasta.PartInfo, value: Uint8Array): void {
    this.check(info, 'text')
    if (this.texts[info.name] !== undefined) throw onceAsText(info.name)
    this.texts[info.name] = Multipasta.decodeField(info, value)
  }

  file(info: Multipasta.PartInfo): (chunk: Uint8Array | null) => void {
    this.check(info, 'file')
    const index = this.files[info.name] ?? 0
    if (index >= this.spec.files[info.name]) {
      throw new ApiError('invalid_input', `Expected at most ${this.spec.files[info.name]} ${info.name} part(s)`, {
        field: info.name,
      })
    }
    this.files[info.name] = index + 1
    const sink = this.spec.openFile(info.name, index)
    this.open.add(sink)
    return (chunk) => {
      this.pending.push({ sink, chunk })
    }
  }

  fail(error: ApiError): void {
    this.failure ??= error
  }

  done(): void {
    this.finished = true
  }

  /** Writes what the last parsed chunk produced, in order; throws the parser's first error. */
  async flush(): Promise<void> {
    const pending = this.pending
    this.pending = []
    for (const { sink, chunk } of pending) {
      if (chunk !== null) await sink.write(chunk)
      else {
        this.open.delete(sink)
        await sink.close()
      }
    }
    if (this.failure) throw this.failure
  }

  async abort(): Promise<void> {
    const sinks = [...this.open]
    this.open.clear()
    this.pending = []
    for (const sink of sinks) await sink.abort().catch(() => undefined)
  }

  result(): StreamedForm {
    return { texts: this.texts, files: this.files }
  }

  /** A part the operation does not list is refused by its name, the way the schema's strictness words it. */
  private check(info: Multipasta.PartInfo, kind: 'text' | 'file'): void {
    this.parts++
    const { name } = info
    if (name === '') throw unnamedPart(this.parts)
    const isText = this.spec.texts.includes(name)
    const isFile = Object.hasOwn(this.spec.files, name)
    if (!isText && !isFile) {
      throw issueToApiError({ code: 'unrecognized_keys', keys: [name], path: [], message: '' }, [], 'form')
    }
    if (kind === 'file' && isText) throw onceAsText(name)
    if (kind === 'text' && isFile) {
      throw new ApiError('invalid_input', `Expected ${name} as a file part`, { field: name })
    }
  }
}

const onceAsText = (name: string) => new ApiError('invalid_input', `Expected ${name} once, as text`, { field: name })

/**
 * A part whose Content-Disposition gives no name (`form-data; name=""`, or no `name` at all) is
 * none of the operation's parts, and no name can say which: its position and header do.
 */
const unnamedPart = (position: number) =>
  new ApiError(
    'invalid_input',
    `Expected a name in the Content-Disposition of multipart part ${position} (form-data; name="…") but it has none`,
    { field: 'Content-Disposition' },
  )

/** The parser's error, in the project's wording; `position` is the part it was reading (1-based). */
function parseError(error: Multipasta.MultipartError, position: number): ApiError {
  switch (error._tag) {
    case 'InvalidDisposition':
      return unnamedPart(position)
    case 'InvalidBoundary':
      return new ApiError('invalid_input', 'Expected a multipart/form-data body with a boundary')
    case 'ReachedLimit':
      return error.limit === 'MaxFieldSize'
        ? new ApiError('invalid_input', `Expected each text part to be at most ${MAX_TEXT_BYTES} bytes`)
        : new ApiError('invalid_input', `Expected at most ${MAX_PARTS} multipart parts`)
    case 'EndNotReached':
      return new ApiError('invalid_input', 'The multipart body ended before its closing boundary')
    default:
      return new ApiError('invalid_input', 'Malformed multipart body: a part has bad headers')
  }
}
