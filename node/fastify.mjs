// The ES module form of fastify.js: the same objects.
import plugin from './fastify.js';

export default plugin;
export const { agentsig, DEFAULT_MAX_BODY, DEFAULT_MAX_DIRECTORY_WAITS } = plugin;
