import { formatMoneyIn, usdc } from "./amounts"
import {
  chooseLanguage,
  fill,
  type Language,
  type MessageId,
  type Msg,
  messages,
  storedLanguage
} from "./messages"

/**
 * The page's language: the payer's choice on the page (kept in localStorage), else the browser's preferences.
 * Words come from the catalogues (messages.ts); numbers, money and times from `Intl` in the payer's locale.
 */
const STORAGE_KEY = "checkout-language"

export type Params = Readonly<Record<string, string>>
export type { Msg }

const browserTags = (): ReadonlyArray<string> =>
  navigator.languages.length > 0 ? navigator.languages : [navigator.language]

/** Storage can be missing or refuse (private modes, blocked cookies): the choice then lasts as long as the page. */
const readStored = (): Language | undefined => {
  try {
    return storedLanguage(localStorage.getItem(STORAGE_KEY))
  } catch {
    return undefined
  }
}
const store = (language: Language) => {
  try {
    localStorage.setItem(STORAGE_KEY, language)
  } catch {
    // Not kept; the page still switches.
  }
}

/**
 * The locale numbers and dates are written in: the browser's own tag when it is the chosen language (so `es-MX`
 * and `en-GB` keep their regions' conventions), else the catalogue's tag.
 */
const localeFor = (language: Language): string => {
  for (const tag of browserTags()) {
    if (chooseLanguage([tag]) !== language) continue
    try {
      return Intl.getCanonicalLocales(tag)[0] ?? language
    } catch {
      // A malformed tag: try the next.
    }
  }
  return language
}

let language: Language = readStored() ?? chooseLanguage(browserTags())
let locale = localeFor(language)

export const t = (id: MessageId, params?: Params): string => fill(messages[language][id], params)

/** A message whose placeholders are nodes (links, the strong amount): the text around them, nodes in their place. */
export const tNodes = (id: MessageId, nodes: Readonly<Record<string, Node | string>>): Array<Node | string> =>
  messages[language][id]
    .split(/(\{\w+\})/)
    .filter((part) => part !== "")
    .map((part) => {
      const name = /^\{(\w+)\}$/.exec(part)?.[1]
      return name !== undefined ? (nodes[name] ?? part) : part
    })

/** An error whose sentence is a message: said again in the new language when the payer switches. */
export class Said extends Error {
  constructor(readonly msg: Msg) {
    super(t(msg.id, msg.params))
  }
}

/** A number of USDC without the currency, in the payer's locale (`100,00`). */
export const units = (baseUnits: bigint) => formatMoneyIn(locale, baseUnits)

/** Money in the payer's locale: `4,25 USDC` in German. Exact, from base units (amounts.ts). */
export const money = (units: string | bigint) => usdc(units, locale)

/** The network's name with a capital, as a line of the receipt begins (`toLocaleUpperCase` knows Turkish i). */
export const capitalized = (text: string) => text.charAt(0).toLocaleUpperCase(locale) + text.slice(1)

/** A moment with its date, time and time zone in the payer's zone (the receipt's time). */
export const dateTime = (iso: string) =>
  new Intl.DateTimeFormat(locale, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short"
  }).format(new Date(iso))

/** A time of day with its zone (until when the request takes payment), with its day unless it is today. */
export const clock = (iso: string) => {
  const at = new Date(iso)
  const today = at.toDateString() === new Date().toDateString()
  return new Intl.DateTimeFormat(locale, {
    ...(today ? {} : { month: "short", day: "numeric" }),
    hour: "numeric",
    minute: "2-digit",
    timeZoneName: "short"
  }).format(at)
}

/** The payer's zone by name, for a title beside the times shown. */
export const zoneName = () => Intl.DateTimeFormat().resolvedOptions().timeZone

/** `Intl.DurationFormat` where the browser has it (not yet in TypeScript's ES2023 library). */
const DurationFormat = (
  Intl as unknown as {
    DurationFormat?: new (
      locale: string,
      options: { style: "narrow" }
    ) => { format(duration: { hours: number; minutes: number; seconds: number }): string }
  }
).DurationFormat

/** A duration in hours, minutes and seconds as the locale writes it short (`23h 59m 41s`, `23小时59分钟41秒`). */
export const duration = (seconds: number) => {
  const hours = Math.floor(seconds / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  const rest = seconds % 60
  if (DurationFormat !== undefined)
    return new DurationFormat(locale, { style: "narrow" }).format({ hours, minutes, seconds: rest })
  const unit = (value: number, name: "hour" | "minute" | "second") =>
    new Intl.NumberFormat(locale, { style: "unit", unit: name, unitDisplay: "narrow" }).format(value)
  const parts = [...(hours > 0 ? [unit(hours, "hour")] : []), unit(minutes, "minute"), unit(rest, "second")]
  return new Intl.ListFormat(locale, { type: "unit", style: "narrow" }).format(parts)
}

/** A file's size in kilobytes, as the locale writes it. */
export const kilobytes = (bytes: number) =>
  new Intl.NumberFormat(locale, { style: "unit", unit: "kilobyte" }).format(Math.ceil(bytes / 1024))

/** Alternatives as the locale joins them: `a or b`, `a oder b`, `a或b`. */
export const eitherOf = (nodes: ReadonlyArray<Node>): Array<Node | string> => {
  const parts = new Intl.ListFormat(locale, { type: "disjunction" }).formatToParts(
    nodes.map((_, i) => String(i))
  )
  return parts.map((p) => (p.type === "element" ? (nodes[Number(p.value)] ?? p.value) : p.value))
}

/** Every fixed word of the page in the current language: text, labels, the title and `<html lang>`. */
const applyFixedWords = () => {
  document.documentElement.lang = language
  document.title = t("page.title")
  for (const node of document.querySelectorAll<HTMLElement>("[data-i18n]"))
    node.textContent = t(node.dataset.i18n as MessageId)
  for (const node of document.querySelectorAll<HTMLElement>("[data-i18n-label]"))
    node.setAttribute("aria-label", t(node.dataset.i18nLabel as MessageId))
  const picker = document.querySelector<HTMLSelectElement>("#language")
  if (picker !== null) picker.value = language
}

const listeners: Array<() => void> = []
/** What must be drawn again when the language changes (the request's own words, the live region). */
export const onLanguageChange = (listener: () => void) => listeners.push(listener)

export const setLanguage = (next: Language) => {
  language = next
  locale = localeFor(next)
  applyFixedWords()
  for (const listener of listeners) listener()
}

/** The picker: a choice applies at once, without a reload, and is remembered for the next visit. */
export const wireLanguagePicker = () => {
  applyFixedWords()
  const picker = document.querySelector<HTMLSelectElement>("#language")
  picker?.addEventListener("change", () => {
    const next = storedLanguage(picker.value)
    if (next === undefined) return
    store(next)
    setLanguage(next)
  })
}
