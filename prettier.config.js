// Prettier: `npm run format:check`. Set to the code as it is written: single quotes, semicolons, trailing commas,
// `(x) =>` arrows, and long lines (99 % of the lines of src/ and test/ are under 165 characters).
/** @type {import('prettier').Config} */
export default {
  printWidth: 160,
  singleQuote: true,
  trailingComma: 'all',
  arrowParens: 'always',
  semi: true,
};
