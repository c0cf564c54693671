// Short functions (DESIGN: no function over 80 lines): `npm run lint:size`. No function of the service (src/) has
// more than 80 lines of code, blank lines and comments not counted. The migrations are left out: they are data
// written as code, one table's columns in one function. Syntax only, so it needs no type information.
//
// A configuration of its own, outside `npm run lint`, while functions over the mark are being split; once it
// finds nothing it joins eslint.config.js, and CI runs it there.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import { IGNORED } from './eslint.config.js';

export const MAX_FUNCTION_LINES = 80;

export default defineConfig(IGNORED, {
  files: ['src/**/*.{ts,mjs}'],
  ignores: ['src/db/migrations/**'],
  linterOptions: { reportUnusedDisableDirectives: 'off' },
  languageOptions: { parser: tseslint.parser },
  rules: {
    'max-lines-per-function': ['error', { max: MAX_FUNCTION_LINES, skipBlankLines: true, skipComments: true, IIFEs: true }],
  },
});
