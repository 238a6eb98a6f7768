#!/usr/bin/env node
// A `--browser` command for tests: instead of approving, sends the loopback receiver the
// authorization error named by the first argument (RFC 6749 §4.1.2.1), or a redirect with a foreign
// state for `wrong-state`. Usage: node redirect-error-browser.js ERROR AUTHORIZE_URL
const [error, raw] = process.argv.slice(2);
const url = new URL(raw);
const target = new URL(url.searchParams.get('redirect_uri'));
if (error === 'wrong-state') {
  target.searchParams.set('code', 'not-a-real-code');
  target.searchParams.set('state', 'someone-elses-state');
} else {
  target.searchParams.set('error', error);
  target.searchParams.set('state', url.searchParams.get('state') ?? '');
}
await fetch(target).catch(() => undefined);
