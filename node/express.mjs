// The ES module form of express.js: the same objects.
export * from './express.js';
export { default } from './express.js';
