// The ES module entry point: the very objects of the CommonJS one
// (index.js), so `instanceof` holds across `import` and `require`. Node
// finds the names in index.js's `module.exports = {...}` (its CommonJS
// named-exports detection).
export * from './index.js';
export { default } from './index.js';
