import { Context } from "effect"

/**
 * The Node server as far as a shutdown needs it: stop taking connections at once. The first thing a shutdown does
 * (before the handlers go): a kept-alive connection could otherwise carry a new request to handlers already
 * released, where it would hang, and the server's close would wait on it for good.
 */
export class ListeningServer extends Context.Tag("deposits/ListeningServer")<
  ListeningServer,
  { readonly stopAccepting: () => void }
>() {}
