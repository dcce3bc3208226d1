import { fill, type MessageId, messages } from "./messages"

/** USDC amounts from base-unit strings (6 decimals), with BigInt only: a float would round a payer's money. */
export const formatUnits = (units: bigint): string => {
  const negative = units < 0n
  const abs = negative ? -units : units
  const whole = abs / 1_000_000n
  const fraction = (abs % 1_000_000n).toString().padStart(6, "0")
  return `${negative ? "-" : ""}${whole.toString()}.${fraction}`
}

/**
 * An amount the way people read money: thousands grouped, cents always shown, and every further digit kept when
 * it is not zero (`1,234.50`, `0.000001`), so nothing is rounded away. Base units in, BigInt only.
 */
export const formatMoney = (units: bigint): string => {
  const [whole = "0", fraction = "000000"] = formatUnits(units).split(".")
  const negative = whole.startsWith("-")
  const digits = negative ? whole.slice(1) : whole
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  const cents = fraction.replace(/0+$/, "").padEnd(2, "0")
  return `${negative ? "-" : ""}${grouped}.${cents}`
}

/**
 * The same amount in a locale's own way (`1.234,50` in German, `1 234,50` in French), still exact: `Intl` formats
 * the whole part and the fraction's digits as integers (BigInt) and gives the separators; no float ever holds money.
 */
export const formatMoneyIn = (locale: string, units: bigint): string => {
  const negative = units < 0n
  const abs = negative ? -units : units
  const digits = (abs % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "").padEnd(2, "0")
  const numbers = new Intl.NumberFormat(locale)
  const decimal = numbers.formatToParts(1.5).find((p) => p.type === "decimal")?.value ?? "."
  const fraction = new Intl.NumberFormat(locale, {
    minimumIntegerDigits: digits.length,
    useGrouping: false
  }).format(BigInt(digits))
  const body = `${numbers.format(abs / 1_000_000n)}${decimal}${fraction}`
  // The sign where the locale puts it: the parts of ±1 with the integer replaced by the whole amount.
  return numbers
    .formatToParts(negative ? -1n : 1n)
    .map((p) => (p.type === "integer" ? body : p.value))
    .join("")
}

/** A base-unit string as money with its currency: `4.25 USDC` (in English unless a locale is given). */
export const usdc = (units: string | bigint, locale = "en-US"): string =>
  `${formatMoneyIn(locale, BigInt(units))} USDC`

/** What is still owed (never below zero). */
export const owed = (amountUnits: string, receivedUnits: string): bigint => {
  const left = BigInt(amountUnits) - BigInt(receivedUnits)
  return left > 0n ? left : 0n
}

/** The network a chain id names, as a payer's wallet shows it; the sandbox's chain is local and says so. */
export const networkName = (
  chainId: number,
  sandbox: boolean,
  text: (id: MessageId, params: Record<string, string>) => string = (id, params) =>
    fill(messages.en[id], params)
): string => {
  const chain = { chain: String(chainId) }
  if (sandbox) return text("network.sandbox", chain)
  if (chainId === 143) return text("network.monad", chain)
  if (chainId === 10143) return text("network.monadTestnet", chain)
  return text("network.other", chain)
}
