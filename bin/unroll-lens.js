#!/usr/bin/env node
// Entry of the `unroll-lens` command; the TypeScript build lives in out/.
const path = require('path');
const fs = require('fs');
const main = path.join(__dirname, '..', 'out', 'src', 'cli', 'main.js');
if (!fs.existsSync(main)) {
  console.error('unroll-lens: not built yet. Run `npm run build` in ' + path.resolve(__dirname, '..'));
  process.exit(2);
}
// `unroll-lens … | head` closes stdout early: that is not an error.
process.stdout.on('error', e => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
require(main)
  .main(process.argv.slice(2))
  .then(code => {
    process.exitCode = code;
  });
