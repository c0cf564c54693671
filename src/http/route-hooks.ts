/**
 * A route's own hooks of one kind, as a list: Fastify accepts one function, a list or none. Plugins that add a
 * hook to each route from `onRoute` (auth, idempotency, metrics) keep the route's own hooks with it.
 */
export function routeHooks<H>(hooks: H | readonly H[] | undefined): H[] {
  return hooks === undefined ? [] : ([hooks].flat() as H[]);
}
