#!/usr/bin/env node
// `portolan` in a checkout: npm links this file into node_modules/.bin on `npm ci` (this folder is a private
// workspace of the root package.json), so `npx portolan` runs the checkout's own command and never fetches a
// package from the registry. It only hands over to bin/portolan.js, which checks the Node version first;
// hence nothing here but an import that any Node with ES modules reads.
import '../../bin/portolan.js';
