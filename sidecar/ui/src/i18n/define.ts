// The shape of a dictionary file (kept apart from i18n/index.ts so tests can load dictionaries
// without Vite): the same keys in English and German under one namespace.
export type Lang = 'en' | 'de';
export const LANGS: Lang[] = ['en', 'de'];
export type Strings = Record<string, string>;
export interface Dict {
  ns: string;
  en: Strings;
  de: Strings;
}

export const defineDict = <const E extends Strings>(ns: string, d: { en: E; de: { [K in keyof E]: string } }): Dict => ({ ns, ...d });
