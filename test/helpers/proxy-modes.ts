/** The test inference proxy's modes (inference-proxy.ts): its own file, free of Node imports, so the
 * Worker tests (workerd) can name them too. */
export type ProxyMode =
  | 'normal'
  | 'down'
  | 'die-on-remove'
  | 'saturated'
  | 'hold-remove'
  | 'hold-output'
  | 'frozen'
  | 'freeze-on-remove'
  /** Like 'freeze-on-remove', for an export's render. */
  | 'freeze-on-export'
  | 'fail-next-remove'
  /** Everything forwarded, to the slow stub server (200 ms a run; inference-process.ts). */
  | 'slow'
