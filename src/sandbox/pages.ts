/** Server-rendered HTML for the sandbox's approval pages: one layout, a TEST banner, two languages. */
export type PageLang = 'en' | 'nl';

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const BANNER: Record<PageLang, string> = {
  en: 'TEST SANDBOX — not a qualified signature service. Nothing signed here has legal effect.',
  nl: 'TESTOMGEVING — geen gekwalificeerde ondertekendienst. Niets wat hier wordt ondertekend heeft rechtsgevolg.',
};

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
.banner{background:#b42318;color:#fff;padding:.6rem 1rem;font-weight:600;text-align:center}
main{max-width:38rem;margin:2rem auto;background:#fff;border-radius:10px;padding:1.5rem 2rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.35rem;margin-top:0}
button,.button{font:inherit;padding:.55rem 1.2rem;border-radius:6px;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer;margin-right:.5rem}
button.secondary{background:#fff;color:#1d4ed8}
code,.mono{font-family:ui-monospace,Menlo,monospace;font-size:.85rem;word-break:break-all}
label{display:block;margin:.8rem 0 .3rem}
input[type=text],input[type=password],select{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}
.muted{color:#5b6474;font-size:.9rem}
ul.hashes{padding-left:1.2rem;max-height:16rem;overflow:auto}
`;

export interface PageOptions {
  title: string;
  lang: PageLang;
  /** Inner HTML; callers escape every value they interpolate. */
  body: string;
}

export function renderPage({ title, lang, body }: PageOptions): string {
  return `<!doctype html>
<html lang="${lang}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · esign sandbox</title><style>${STYLE}</style></head>
<body><div class="banner" role="note">${escapeHtml(BANNER[lang])}</div>
<main>${body}</main></body></html>`;
}

/** Hidden inputs that carry request parameters through a form post. */
export function hiddenInputs(params: URLSearchParams | Record<string, string>): string {
  const entries = params instanceof URLSearchParams ? [...params.entries()] : Object.entries(params);
  return entries
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
}

/** Picks `nl` or `en` from a language tag list such as `ui_locales=en-GB nl`. */
export function pickLang(tags: string | null | undefined, fallback: PageLang): PageLang {
  for (const tag of (tags ?? '').split(/[\s,]+/)) {
    const primary = tag.toLowerCase().split('-')[0];
    if (primary === 'en' || primary === 'nl') return primary;
  }
  return fallback;
}
