/**
 * Webhook-ids carry a random tag (`msg_<first>_<last>[_replay<id>]_<tag>`): tests compare what an
 * operator reads, the id without its tag, and check separately that resends keep the whole id.
 */

const TAGGED = /^(msg_\d+_\d+(?:_replay\d+)?)_[0-9a-f]{8}$/;

/** `id` without its tag; throws when `id` has no tag, so a test cannot pass on an untagged id. */
export function untagged(id: string): string {
  const match = TAGGED.exec(id);
  if (!match?.[1])
    throw new Error(`${id} is not a tagged webhook-id (msg_<first>_<last>[_replay<id>]_<8 hex>)`);
  return match[1];
}

/** Every id of `ids` without its tag. */
export function untaggedAll(ids: readonly string[]): string[] {
  return ids.map(untagged);
}
