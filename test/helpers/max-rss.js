// A preload for tests (`node --import …/max-rss.js`): on exit, writes this process's peak resident
// set size in KiB (process.resourceUsage().maxRSS) to the file named by ESIGN_TEST_MAX_RSS_FILE.
// Node only, so memory tests need no /usr/bin/time.
import { writeFileSync } from 'node:fs';

const target = process.env.ESIGN_TEST_MAX_RSS_FILE;
if (target) process.on('exit', () => writeFileSync(target, String(process.resourceUsage().maxRSS)));
