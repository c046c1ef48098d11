/**
 * Personal subtrees of shapes the contract does not allow (an array, text or a number where an
 * object belongs), each holding its own person, for the tests that SYNC_PERSONAL_DATA fails closed.
 */

/** One person's values; each shape plants its own, so a leak names the shape it came through. */
export interface Person {
  name: string;
  phone: string;
  /** The phone as digits, as a number would print it. */
  digits: string;
  email: string;
  address: string;
  account: string;
}

/** The person of shape `i`: every value unique to it, none a part of another's. */
export function person(i: number): Person {
  const n = String(i).padStart(2, "0");
  const digits = `2348095550${n}7`;
  return {
    name: `Zinnia Brightwater-${"ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i % 26]}${n}`,
    phone: `+${digits}`,
    digits,
    email: `zinnia.${n}@odd-shape.example`,
    address: `${n} Marina Parade Quay`,
    account: `55667${n}991`,
  };
}

type Obj = Record<string, unknown>;

const contact = (p: Person) => ({ name: p.name, phone: p.phone, email: p.email });
const address = (p: Person) => ({ addressLine1: p.address, city: "Lagos", countryCode: "NG" });
const party = (p: Person) => ({ contact: contact(p), addressDetails: address(p) });
const partyWith = (p: Person, key: "contact" | "addressDetails", value: unknown) => ({
  ...party(p),
  [key]: value,
});

/** An odd shape: where it goes in a record, and the value it puts there for person `p`. */
export interface OddShape {
  label: string;
  /** The record's top-level key it replaces. */
  key: "sender" | "receiver" | "payments";
  /** Where, inside that key's value, the odd value sits; the value itself when absent. */
  at?: string;
  value: (p: Person) => unknown;
}

export const ODD_SHAPES: readonly OddShape[] = [
  { label: "receiver is an array", key: "receiver", value: (p) => [party(p)] },
  {
    label: "receiver is a string",
    key: "receiver",
    value: (p) => `${p.name}, ${p.phone}, ${p.email}, ${p.address}`,
  },
  { label: "receiver is a number", key: "receiver", value: (p) => Number(p.digits) },
  { label: "sender is an array of strings", key: "sender", value: (p) => [p.name, p.phone, p.email] },
  {
    label: "sender.contact is an array",
    key: "sender",
    at: "contact",
    value: (p) => partyWith(p, "contact", [contact(p)]),
  },
  {
    label: "sender.contact is a string",
    key: "sender",
    at: "contact",
    value: (p) => partyWith(p, "contact", p.email),
  },
  {
    label: "receiver.addressDetails is a string",
    key: "receiver",
    at: "addressDetails",
    value: (p) => ({ contact: {}, addressDetails: `${p.address}, Lagos` }),
  },
  {
    label: "receiver.addressDetails is an array",
    key: "receiver",
    at: "addressDetails",
    value: (p) => ({ contact: {}, addressDetails: [address(p)] }),
  },
  {
    label: "receiver.contact.name is an object",
    key: "receiver",
    at: "contact.name",
    value: (p) => ({ contact: { name: { full: p.name, phone: p.phone } }, addressDetails: {} }),
  },
  {
    label: "streetLines hold arrays",
    key: "receiver",
    at: "addressDetails.streetLines.0",
    value: (p) => ({ contact: {}, addressDetails: { city: "Lagos", streetLines: [[p.address, p.email]] } }),
  },
  {
    label: "payments is an array",
    key: "payments",
    value: (p) => [{ accountNumber: p.account, customerId: p.email, holder: p.name }],
  },
  { label: "payments is a string", key: "payments", value: (p) => `account ${p.account} of ${p.name}` },
  { label: "payments is a number", key: "payments", value: (p) => Number(p.account) },
];

/** `record` with shape `i` planted. */
export function plant(record: Obj, i: number): Obj {
  const shape = ODD_SHAPES[i] as OddShape;
  return { ...record, [shape.key]: shape.value(person(i)) };
}

/** The values of person `i` that shape `i` holds: what must not be found once it is stored. */
export function planted(i: number): string[] {
  const p = person(i);
  const text = JSON.stringify((ODD_SHAPES[i] as OddShape).value(p));
  const found = [p.name, p.phone, p.digits, p.email, p.address, p.account].filter((v) => text.includes(v));
  if (found.length === 0) throw new Error(`shape ${i} plants no personal value`);
  return found;
}

/** A value nested `depth` arrays deep around `inner`, built without recursion. */
export function nested(depth: number, inner: unknown): unknown {
  let value = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}
