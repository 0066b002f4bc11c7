// Country names for the country filter: ISO 3166-1 alpha-2 codes (@gatehouse/common/countries.js,
// the list the server checks) named by the browser's Intl.DisplayNames in the reader's language.
import { COUNTRY_CODES } from '@gatehouse/common/countries.js';
import type { Lang } from '../../i18n/define';

const cache = new Map<Lang, { code: string; name: string }[]>();

/** The name of a country code in a language (the code itself when the browser has no name). */
export function countryName(code: string, lang: Lang): string {
  try {
    return new Intl.DisplayNames([lang], { type: 'region', fallback: 'code' }).of(code) ?? code;
  } catch {
    return code;
  }
}

/** Every code with its name, sorted by name in that language. */
export function countryList(lang: Lang): { code: string; name: string }[] {
  let list = cache.get(lang);
  if (!list) {
    const names = new Intl.DisplayNames([lang], { type: 'region', fallback: 'code' });
    const collator = new Intl.Collator(lang);
    list = COUNTRY_CODES.map((code) => ({ code, name: names.of(code) ?? code })).sort((a, b) => collator.compare(a.name, b.name));
    cache.set(lang, list);
  }
  return list;
}
