/**
 * The one header of every page (issue 30 item 5): the brand, the site's navigation and the
 * account corner. scripts/build-web.ts puts it where a web/*.html page says `<!-- site-header -->`,
 * and scripts/lib/error-pages.ts into each /errors page, so no page keeps a menu of its own.
 * web/src/header.ts brings it to life on pages with a script: the links marked `data-signed-in`
 * and the account corner follow the session. The /errors pages run no script (their CSP allows
 * none), so they show it as a signed-out visitor sees it.
 */

export interface NavLink {
  href: string
  label: string
  /** Shown only to a signed-in visitor (the home page's account sections). */
  signedIn?: boolean
}

export const SITE_NAV: readonly NavLink[] = [
  { href: '/', label: 'Remove a background' },
  { href: '/#history', label: 'History', signedIn: true },
  { href: '/#keys', label: 'API keys', signedIn: true },
  { href: '/#webhooks', label: 'Webhooks', signedIn: true },
  { href: '/catalog', label: 'Catalog photo' },
  { href: '/try-on', label: 'Try-on' },
  { href: '/docs', label: 'API reference' },
]

/** Where `<!-- site-header -->` stands in a page's HTML. */
export const HEADER_MARK = '<!-- site-header -->'

export interface HeaderOptions {
  /** The page's path (`/`, `/catalog`, …): its link gets `aria-current="page"`. */
  path: string
  /** Whether the page has its own `#sign-in` section; the "Sign in" link goes there, else to the home page's. */
  signInHere: boolean
}

const INDENT = '    '

/** The header's markup, indented for a `<body>`. */
export function siteHeader({ path, signInHere }: HeaderOptions): string {
  const links = SITE_NAV.map(({ href, label, signedIn }) => {
    const attrs = [`href="${href}"`]
    if (href === path) attrs.push('aria-current="page"')
    if (signedIn) attrs.push('data-signed-in hidden')
    return `${INDENT}    <a ${attrs.join(' ')}>${label}</a>`
  })
  return [
    '<header class="bar">',
    '  <a class="brand" href="/">Cutout</a>',
    '  <nav aria-label="Site">',
    ...links.map((line) => line.slice(INDENT.length)),
    '  </nav>',
    '  <div class="account">',
    '    <span id="signed-in" hidden>',
    '      <span id="signed-in-as"></span>',
    '      <button type="button" id="sign-out" class="link">Sign out</button>',
    '    </span>',
    `    <a id="signed-out" href="${signInHere ? '#sign-in' : '/#sign-in'}">Sign in</a>`,
    '  </div>',
    '</header>',
  ]
    .map((line, i) => (i === 0 ? line : INDENT + line))
    .join('\n')
}

/** `html` (a web/*.html page served at `path`) with its header mark replaced by the site header. */
export function withSiteHeader(html: string, path: string): string {
  if (!html.includes(HEADER_MARK)) throw new Error(`the page for ${path} has no ${HEADER_MARK}`)
  return html.replace(HEADER_MARK, siteHeader({ path, signInHere: /\bid="sign-in"/.test(html) }))
}
