#!/usr/bin/env node
// A `--browser` command for tests that need nothing but Node: loads the authorization URL and
// follows its redirects (as `curl -sfL` would), so an auto-approving sandbox lands on the loopback
// receiver. Usage: node follow-redirects-browser.js AUTHORIZE_URL
const response = await fetch(process.argv[2]);
process.exitCode = response.ok ? 0 : 1;
