#!/usr/bin/env node
require('../dist/cli/launch.cjs').launch(require('node:path').join(__dirname, '../dist/cli/esign.cjs'));
