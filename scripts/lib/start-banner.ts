/**
 * What `npm start` prints once both servers answer: the base URL, the web page, the development
 * API key and a "Try it" a new user pastes into another terminal. That terminal's working
 * directory is anyone's guess (a new terminal opens in the home directory), so the commands name
 * the sample and the output folder by absolute path, through `DIR`; they write into `out/`
 * (git-ignored) and every curl fails on an HTTP error (`-f`) rather than saving an error page as
 * a PNG. test/e2e/try-it.test.ts runs the printed commands as printed.
 */

/** The folder (under the repository root, git-ignored) the printed commands and README write to. */
export const OUTPUT_DIR = 'out'

/** The sample photo of examples/ the "Try it" removes the background of. */
export const SAMPLE_PHOTO = 'examples/photo.jpg'

export interface BannerOptions {
  baseUrl: string
  apiKey: string
  /** The repository's absolute path. */
  root: string
}

/** `text` quoted for a POSIX shell: single quotes, an inner `'` closed, escaped and reopened. */
export const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

const OPTIONS = '{"quality":"balanced","alpha":{"mode":"raw","feather":0},"output":"cutout"}'

/**
 * The "Try it" commands, one shell line each: create the removal (multipart), wait on the job's
 * event stream (it ends when the job does), then download the result with the key. A refusal at
 * any step exits non-zero with curl's message and saves nothing.
 */
export function tryItCommands({ baseUrl, apiKey, root }: BannerOptions): string[] {
  const auth = '-H "Authorization: Bearer $KEY"'
  return [
    `KEY=${apiKey}; BASE=${baseUrl}; DIR=${shellQuote(root)}; mkdir -p "$DIR/${OUTPUT_DIR}"`,
    `JOB=$(curl -fsS ${auth} -H "Idempotency-Key: $(date +%s%N)" -H 'Expect:' -F image=@"$DIR/${SAMPLE_PHOTO}" -F 'options=${OPTIONS}' "$BASE/v1/removals") && ID=$(echo "$JOB" | node -pe 'JSON.parse(require("fs").readFileSync(0)).id') && echo "job $ID"`,
    `curl -fsS -N -o /dev/null ${auth} "$BASE/v1/jobs/$ID/events"  # ends when the job does`,
    `curl -fsS ${auth} -o "$DIR/${OUTPUT_DIR}/cutout.png" "$BASE/v1/jobs/$ID/result" && echo "saved $DIR/${OUTPUT_DIR}/cutout.png"`,
  ]
}

/** The lines `npm start` prints when the stack is up (the e2e tests read `Base URL:` and `API key:`). */
export function startBanner(options: BannerOptions): string {
  const { baseUrl, apiKey } = options
  return [
    '',
    `Base URL: ${baseUrl}`,
    `Web page: ${baseUrl}/  (try it without an account; /device approves a CLI login)`,
    `API key: ${apiKey}`,
    '',
    `Try it from any directory (removes the background of ${SAMPLE_PHOTO}, saves ${OUTPUT_DIR}/cutout.png):`,
    ...tryItCommands(options).map((line) => `  ${line}`),
    '',
    'Ctrl-C stops both servers. An inference server that dies is restarted; the Worker stays up.',
    '',
  ].join('\n')
}
