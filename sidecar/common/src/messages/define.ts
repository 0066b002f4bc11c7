// The shape of the message catalogue (index.ts): every message the server writes for a person has
// a stable code, and each code has one wording per language: a function from the message's
// parameters to its text. The English wordings live in this folder (the server's text, from the
// same catalogue); the admin app holds the German ones (sidecar/ui/src/i18n/messages/) and words
// each code in the reader's language.

/** A message as data: its code and parameters (what error bodies, activity rows and reasons carry). */
export interface MessageRef {
  code: string;
  params?: Record<string, unknown>;
}

/** Words a message (a nested one too) in one language. */
export type Words = (ref: MessageRef) => string;

/** One code's text in one language: the parameters (typed) → the text; `w` words a parameter that is itself a message. */
export type Wording<P = never> = (p: P, w: Words) => string;

/** The wordings of one area, by code. */
export type Catalogue = Record<string, Wording<never>>;

/** The same codes worded in another language, each with the English wording's parameters. */
export type Translation<C extends Catalogue> = { [K in keyof C]: Wording<Parameters<C[K]>[0]> };
