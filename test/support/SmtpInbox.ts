import { SMTPServer } from "smtp-server"

/** A received mail's text: quoted-printable undone, its bytes read as UTF-8. */
export const decodedMail = (raw: string) =>
  Buffer.from(
    raw
      .replace(/=\r?\n/g, "")
      .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    "latin1"
  ).toString("utf8")

export interface ReceivedMail {
  readonly to: string
  readonly raw: string
}

/**
 * A real SMTP server on loopback that keeps what it receives: the service talks SMTP to it exactly as to a relay.
 * `refuse` rejects chosen recipients, as a relay may.
 */
export const startSmtpInbox = async (refuse: (address: string) => boolean = () => false) => {
  const inbox: Array<ReceivedMail> = []
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onRcptTo(address, _session, callback) {
      callback(refuse(address.address) ? new Error("550 mailbox unavailable") : undefined)
    },
    onData(stream, session, callback) {
      let raw = ""
      stream.on("data", (d: Buffer) => {
        raw += d.toString()
      })
      stream.on("end", () => {
        inbox.push({ to: session.envelope.rcptTo.map((r) => r.address).join(","), raw })
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()))
  const port = (smtp.server.address() as { port: number }).port
  return {
    inbox,
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve()))
  }
}
