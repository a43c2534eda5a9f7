// The ES module form of fetch.js: the same objects.
export * from './fetch.js';
export { default } from './fetch.js';
