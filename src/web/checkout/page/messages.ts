/**
 * Every word the checkout shows, in one place: one catalogue per language with the same keys, English the reference.
 * `{name}` marks a value filled in at run time; each language keeps exactly English's placeholders
 * (test/unit/checkout/messages.test.ts). The page, the server's HTML and the tests all read from here.
 */

const en = {
  "page.title": "Pay with USDC",
  "language.label": "Language",
  "sandbox.badge": "Sandbox: test money only, nothing here is real",
  "summary.heading": "Payment request",
  "summary.amount": "Amount",
  "summary.received": "Received",
  "summary.owed": "Still owed",
  "summary.timeLeft": "Time left",
  "deadline.left": "{left} (until {time})",
  "deadline.expired": "expired",
  "documents.title": "Documents",
  "mailbox.title": "Confirm your email",
  "mailbox.intro": "The merchant asks you to confirm the email address they have for you.",
  "mailbox.send": "Email me a code",
  "mailbox.codeLabel": "Code from the email",
  "mailbox.confirm": "Confirm",
  "mailbox.sent": "We sent a code to {email}. Enter it below.",
  "mailbox.confirmed": "Email confirmed.",
  "session.title": "Open this page from the merchant's site",
  "session.intro":
    "This payment must be started from the merchant's own page. Go back to it and follow its link again.",
  "connect.title": "Choose the wallet you will pay from",
  "connect.intro":
    "Your wallet signs a short statement (it moves no money); then you get the address to pay.",
  "connect.button": "Connect wallet",
  "connect.choose": "Wallet to pay from",
  "pay.title": "Pay",
  "pay.send": "Send {amount} on {network} to this address:",
  "pay.qrLabel": "QR code for a wallet app: the amount and the address",
  "pay.copy": "Copy address",
  "pay.fromWallet": "Pay from this wallet",
  "phone.title": "Continue on your phone",
  "phone.intro":
    "Wallet on your phone? Scan this with its camera and open the link in your wallet app's browser: you carry on there from where you are.",
  "phone.qrLabel": "QR code of this page's link",
  "phone.copy": "Copy link",
  "apps.title": "Open this page in your wallet app",
  "apps.intro":
    "No wallet was found in this browser. Tap your wallet app: this page opens in its own browser, where you connect your wallet and pay.",
  "apps.other": "Another wallet app? Open its browser and go to this link:",
  "waiting.title": "Payment on its way",
  "waiting.intro":
    "Keep this page open: your receipt appears here once the network has confirmed the payment.",
  "receipt.title": "Receipt",
  "receipt.paid": "Paid",
  "receipt.to": "To",
  "receipt.when": "When",
  "receipt.network": "Network",
  "receipt.transaction": "Transaction",
  "receipt.transactions": "Transactions",
  "sandbox.title": "Sandbox",
  "sandbox.intro": "Test money on the local chain: no wallet extension needed.",
  "sandbox.testWallet": "Use a test wallet",
  "sandbox.fund": "Fund the test wallet",
  "sandbox.payExact": "Pay exactly",
  "sandbox.payPartial": "Pay part",
  "sandbox.payOver": "Pay too much",
  "sandbox.payStranger": "Pay from a stranger",
  "sandbox.ready": "Your payment address is ready (test wallet).",
  "sandbox.funded": "The test wallet got {amount} test USDC.",
  "sandbox.faucetRefused": "The faucet refused.",
  "sandbox.payFailed": "The sandbox payment failed.",
  "sandbox.sent": "Sent {amount}. Waiting for the network to confirm it…",
  "returned.title": "Returned to you",
  "returns.overpayment": "{amount} returned because you sent more than was asked.",
  "returns.expired_balance": "{amount} returned because the request expired before it was paid in full.",
  "returns.late_transfer": "{amount} returned because the payment arrived after the request was closed.",
  "returns.other": "{amount} returned ({reason}).",
  "returns.transaction": "Transaction:",
  "state.awaitingMailbox": "Confirm your email address, then choose the wallet you will pay from.",
  "state.awaitingSession": "Open this page from the merchant's site to continue.",
  "state.awaitingWallet": "Choose the wallet you will pay from to get the payment address.",
  "state.ready": "Ready: send the payment to the address below.",
  "state.partial": "Part of the payment has arrived. Send the rest to the same address.",
  "state.deposited": "Payment received in full; it is being settled.",
  "state.settled": "Paid. Thank you. Your receipt is below.",
  "state.expired": "This payment request has expired.",
  "state.returned": "This payment request is closed; what you sent has been returned.",
  "state.needsAttention": "The merchant is looking into this payment; nothing more is needed from you now.",
  "merchant.someone": "A merchant",
  "merchant.subject": "The merchant",
  "merchant.object": "the merchant",
  "contact.ask": "Questions about this payment? Ask {merchant} and quote this page's link.",
  "contact.ways": "Questions about this payment? Contact {merchant}: {ways}.",
  "wayBack.return": "Return to {merchant}",
  "wayBack.back": "Back to {merchant}",
  "reason.sending": "A payment is being sent from this page: wait for it.",
  "reason.onItsWay":
    "A payment is on its way. The buttons come back if the network has not shown it within two minutes.",
  "reason.noWallet":
    "No wallet is connected in this browser. Send {amount} to the address above from the wallet you chose.",
  "reason.theAmount": "the amount",
  "reason.sandboxOnItsWay": "A payment is on its way: these buttons come back once it has arrived.",
  "notFound.heading": "Payment request not found",
  "notFound.text":
    "There is no payment request at this link. Check the link the merchant gave you, or ask them for a new one.",
  "network.sandbox": "the sandbox test network (chain {chain})",
  "network.monad": "Monad (chain {chain})",
  "network.monadTestnet": "Monad Testnet (chain {chain})",
  "network.other": "chain {chain}",
  "wallet.declined": "You declined in your wallet. Try again when you are ready.",
  "wallet.unknownChain":
    "Your wallet does not know this network (chain {chain}). Add it in your wallet, then try again.",
  "wallet.refused": "Your wallet refused this request. Unlock it, or try another wallet.",
  "wallet.failed": "Your wallet could not do that. Try again.",
  "wallet.none":
    "No wallet was found in this browser. Open this page in a browser with your wallet extension, or continue on your phone with the code below.",
  "wallet.nonePhone":
    "No wallet was found in this browser. Open this page in your wallet app with one of the links below.",
  "wallet.noAccount": "The wallet shared no account.",
  "wallet.switching": "Switching your wallet to the right network…",
  "wallet.adding": "Your wallet does not know {network} yet: approve adding it in your wallet…",
  "wallet.sign": "Sign the statement in your wallet: it proves the wallet is yours and moves no money.",
  "wallet.ready": "Your payment address is ready.",
  "wallet.confirmTransfer": "Confirm the transfer in your wallet…",
  "pay.reconnect": "Reconnect wallet",
  "wallet.attested": "Paying from your wallet {account}",
  "wallet.otherAccount":
    "Your wallet is on account {actual}, but this payment was set up for {expected}. Switch to {expected} in your wallet, then try again.",
  "wallet.notConnected":
    "Your wallet {account} is not connected in this browser. Reconnect it, or send {amount} to the address above from it.",
  "wallet.wrongChain": "Your wallet is still on another network. Switch it to {network}, then try again.",
  "wallet.pendingRequest": "Your wallet already has a request waiting: open your wallet to answer it.",
  "wallet.insufficientFunds":
    "Your wallet says it does not hold enough to pay this and the network fee. Add funds, then try again.",
  "wallet.disconnected": "Your wallet is not connected to the network. Check it, then try again.",
  "wallet.submitted": "Your wallet sent the transfer. Waiting for the network to confirm it…",
  "wallet.confirmed": "The network confirmed your transfer. The request shows it in a moment…",
  "wallet.reverted":
    "The transfer failed on the network: no USDC left your wallet, only the network fee was used. Press Pay from this wallet to try again.",
  "wallet.replaced":
    "Your wallet replaced this transfer with another one. If the payment does not show here within a minute, press Pay from this wallet to try again.",
  "wallet.dropped":
    "The network dropped this transfer: nothing was paid. Press Pay from this wallet to try again.",
  "wallet.stillPending":
    "The transfer is still waiting after ten minutes. Speed it up or cancel it in your wallet; Pay from this wallet is back if you need it.",
  "wallet.followElsewhere": "Switch your wallet back to {network} so this page can follow your transfer.",
  "funds.usdc":
    "This wallet holds {have}: {missing} more is needed to pay {amount}. Add USDC to it, or pay to the address above from another wallet.",
  "funds.fee":
    "This wallet needs about {missing} more for the network fee. Add a little to it, then try again.",
  "funds.coin": "{amount} of the network's own coin",
  "copy.address": "Address copied.",
  "copy.link": "Link copied.",
  "status.reconnecting": "Reconnecting…",
  "status.merchantVerified": "Verified by the merchant.",
  "refusal.invalid_request": "That did not look right. Check what you entered and try again.",
  "refusal.invalid_state":
    "This step is no longer possible: the request has moved on. The page shows where it stands.",
  "refusal.identity_unauthorized":
    "That could not be verified. Check it and try again, or ask the merchant for a new link.",
  "refusal.rate_limited": "Too many tries for now. Wait a little, then try again.",
  "refusal.deposit_request_not_found":
    "This payment request does not exist. Check the link the merchant gave you.",
  "refusal.service_unavailable": "The service is busy for a moment. Try again in a few seconds.",
  "refusal.payload_too_large": "That was too long. Try again with less.",
  "refusal.internal_error": "Something went wrong on our side. Try again in a moment.",
  "refusal.wrongCode":
    "That code is not right, or it has expired. Check the latest email, or send a new code.",
  "refusal.badSignature": "The wallet's signature could not be checked. Sign again in your wallet.",
  "refusal.other": "Something went wrong. Try again in a moment."
} as const

export type MessageId = keyof typeof en
export type Catalogue = { readonly [K in MessageId]: string }

const es: Catalogue = {
  "page.title": "Pagar con USDC",
  "language.label": "Idioma",
  "sandbox.badge": "Entorno de pruebas: dinero de prueba, nada aquí es real",
  "summary.heading": "Solicitud de pago",
  "summary.amount": "Importe",
  "summary.received": "Recibido",
  "summary.owed": "Pendiente",
  "summary.timeLeft": "Tiempo restante",
  "deadline.left": "{left} (hasta las {time})",
  "deadline.expired": "vencida",
  "documents.title": "Documentos",
  "mailbox.title": "Confirma tu correo electrónico",
  "mailbox.intro": "El comercio te pide que confirmes la dirección de correo que tiene de ti.",
  "mailbox.send": "Envíame un código",
  "mailbox.codeLabel": "Código del correo",
  "mailbox.confirm": "Confirmar",
  "mailbox.sent": "Hemos enviado un código a {email}. Escríbelo abajo.",
  "mailbox.confirmed": "Correo confirmado.",
  "session.title": "Abre esta página desde el sitio del comercio",
  "session.intro":
    "Este pago debe iniciarse desde la propia página del comercio. Vuelve a ella y sigue su enlace de nuevo.",
  "connect.title": "Elige la billetera con la que vas a pagar",
  "connect.intro":
    "Tu billetera firma una breve declaración (no mueve dinero); después recibes la dirección a la que pagar.",
  "connect.button": "Conectar billetera",
  "connect.choose": "Billetera con la que pagarás",
  "pay.title": "Pagar",
  "pay.send": "Envía {amount} en {network} a esta dirección:",
  "pay.qrLabel": "Código QR para una app de billetera: el importe y la dirección",
  "pay.copy": "Copiar dirección",
  "pay.fromWallet": "Pagar desde esta billetera",
  "phone.title": "Continúa en tu teléfono",
  "phone.intro":
    "¿Tienes la billetera en el teléfono? Escanea esto con su cámara y abre el enlace en el navegador de tu app de billetera: continúas allí desde donde estás.",
  "phone.qrLabel": "Código QR del enlace de esta página",
  "phone.copy": "Copiar enlace",
  "apps.title": "Abre esta página en tu app de billetera",
  "apps.intro":
    "No se encontró ninguna billetera en este navegador. Toca tu app de billetera: esta página se abre en su propio navegador, donde conectas tu billetera y pagas.",
  "apps.other": "¿Otra app de billetera? Abre su navegador y ve a este enlace:",
  "waiting.title": "Pago en camino",
  "waiting.intro":
    "Mantén esta página abierta: tu recibo aparecerá aquí cuando la red haya confirmado el pago.",
  "receipt.title": "Recibo",
  "receipt.paid": "Pagado",
  "receipt.to": "A",
  "receipt.when": "Fecha",
  "receipt.network": "Red",
  "receipt.transaction": "Transacción",
  "receipt.transactions": "Transacciones",
  "sandbox.title": "Pruebas",
  "sandbox.intro": "Dinero de prueba en la cadena local: no hace falta ninguna extensión de billetera.",
  "sandbox.testWallet": "Usar una billetera de prueba",
  "sandbox.fund": "Cargar la billetera de prueba",
  "sandbox.payExact": "Pagar lo exacto",
  "sandbox.payPartial": "Pagar una parte",
  "sandbox.payOver": "Pagar de más",
  "sandbox.payStranger": "Pagar desde un desconocido",
  "sandbox.ready": "Tu dirección de pago está lista (billetera de prueba).",
  "sandbox.funded": "La billetera de prueba recibió {amount} USDC de prueba.",
  "sandbox.faucetRefused": "El grifo de pruebas se negó.",
  "sandbox.payFailed": "El pago de prueba falló.",
  "sandbox.sent": "Enviado {amount}. Esperando a que la red lo confirme…",
  "returned.title": "Devuelto a ti",
  "returns.overpayment": "{amount} devuelto porque enviaste más de lo solicitado.",
  "returns.expired_balance": "{amount} devuelto porque la solicitud venció antes de pagarse por completo.",
  "returns.late_transfer": "{amount} devuelto porque el pago llegó después de cerrarse la solicitud.",
  "returns.other": "{amount} devuelto ({reason}).",
  "returns.transaction": "Transacción:",
  "state.awaitingMailbox":
    "Confirma tu dirección de correo y después elige la billetera con la que vas a pagar.",
  "state.awaitingSession": "Abre esta página desde el sitio del comercio para continuar.",
  "state.awaitingWallet": "Elige la billetera con la que vas a pagar para obtener la dirección de pago.",
  "state.ready": "Listo: envía el pago a la dirección de abajo.",
  "state.partial": "Ha llegado parte del pago. Envía el resto a la misma dirección.",
  "state.deposited": "Pago recibido por completo; se está liquidando.",
  "state.settled": "Pagado. Gracias. Tu recibo está abajo.",
  "state.expired": "Esta solicitud de pago ha vencido.",
  "state.returned": "Esta solicitud de pago está cerrada; lo que enviaste ha sido devuelto.",
  "state.needsAttention": "El comercio está revisando este pago; por ahora no necesitas hacer nada más.",
  "merchant.someone": "Un comercio",
  "merchant.subject": "El comercio",
  "merchant.object": "el comercio",
  "contact.ask": "¿Preguntas sobre este pago? Consulta a {merchant} e indica el enlace de esta página.",
  "contact.ways": "¿Preguntas sobre este pago? Contacta con {merchant}: {ways}.",
  "wayBack.return": "Volver a {merchant}",
  "wayBack.back": "Regresar a {merchant}",
  "reason.sending": "Se está enviando un pago desde esta página: espera.",
  "reason.onItsWay": "Hay un pago en camino. Los botones vuelven si la red no lo muestra en dos minutos.",
  "reason.noWallet":
    "No hay ninguna billetera conectada en este navegador. Envía {amount} a la dirección de arriba desde la billetera que elegiste.",
  "reason.theAmount": "el importe",
  "reason.sandboxOnItsWay": "Hay un pago en camino: estos botones vuelven cuando haya llegado.",
  "notFound.heading": "Solicitud de pago no encontrada",
  "notFound.text":
    "No hay ninguna solicitud de pago en este enlace. Revisa el enlace que te dio el comercio o pídele uno nuevo.",
  "network.sandbox": "la red de pruebas (cadena {chain})",
  "network.monad": "Monad (cadena {chain})",
  "network.monadTestnet": "Monad Testnet (cadena {chain})",
  "network.other": "cadena {chain}",
  "wallet.declined": "Lo rechazaste en tu billetera. Vuelve a intentarlo cuando quieras.",
  "wallet.unknownChain":
    "Tu billetera no conoce esta red (cadena {chain}). Añádela en tu billetera y vuelve a intentarlo.",
  "wallet.refused": "Tu billetera rechazó esta solicitud. Desbloquéala o prueba con otra billetera.",
  "wallet.failed": "Tu billetera no pudo hacerlo. Vuelve a intentarlo.",
  "wallet.none":
    "No se encontró ninguna billetera en este navegador. Abre esta página en un navegador con la extensión de tu billetera, o continúa en tu teléfono con el código de abajo.",
  "wallet.nonePhone":
    "No se encontró ninguna billetera en este navegador. Abre esta página en tu app de billetera con uno de los enlaces de abajo.",
  "wallet.noAccount": "La billetera no compartió ninguna cuenta.",
  "wallet.switching": "Cambiando tu billetera a la red correcta…",
  "wallet.adding": "Tu billetera aún no conoce {network}: aprueba añadirla en tu billetera…",
  "wallet.sign":
    "Firma la declaración en tu billetera: demuestra que la billetera es tuya y no mueve dinero.",
  "wallet.ready": "Tu dirección de pago está lista.",
  "wallet.confirmTransfer": "Confirma la transferencia en tu billetera…",
  "pay.reconnect": "Volver a conectar la billetera",
  "wallet.attested": "Pagas desde tu billetera {account}",
  "wallet.otherAccount":
    "Tu billetera está en la cuenta {actual}, pero este pago se preparó para {expected}. Cambia a {expected} en tu billetera y vuelve a intentarlo.",
  "wallet.notConnected":
    "Tu billetera {account} no está conectada en este navegador. Vuelve a conectarla, o envía {amount} desde ella a la dirección de arriba.",
  "wallet.wrongChain": "Tu billetera sigue en otra red. Cámbiala a {network} y vuelve a intentarlo.",
  "wallet.pendingRequest": "Tu billetera ya tiene una solicitud pendiente: ábrela para responderla.",
  "wallet.insufficientFunds":
    "Tu billetera indica que no tiene suficiente para pagar esto y la comisión de la red. Añade fondos y vuelve a intentarlo.",
  "wallet.disconnected": "Tu billetera no está conectada a la red. Revísala y vuelve a intentarlo.",
  "wallet.submitted": "Tu billetera envió la transferencia. Esperando a que la red la confirme…",
  "wallet.confirmed": "La red confirmó tu transferencia. La solicitud la mostrará en un momento…",
  "wallet.reverted":
    "La transferencia falló en la red: no salió ningún USDC de tu billetera, solo se usó la comisión de la red. Pulsa Pagar desde esta billetera para volver a intentarlo.",
  "wallet.replaced":
    "Tu billetera sustituyó esta transferencia por otra. Si el pago no aparece aquí en un minuto, pulsa Pagar desde esta billetera para volver a intentarlo.",
  "wallet.dropped":
    "La red descartó esta transferencia: no se pagó nada. Pulsa Pagar desde esta billetera para volver a intentarlo.",
  "wallet.stillPending":
    "La transferencia sigue esperando después de diez minutos. Acelérala o cancélala en tu billetera; Pagar desde esta billetera vuelve a estar disponible si lo necesitas.",
  "wallet.followElsewhere":
    "Vuelve a poner tu billetera en {network} para que esta página pueda seguir tu transferencia.",
  "funds.usdc":
    "Esta billetera tiene {have}: faltan {missing} para pagar {amount}. Añádele USDC, o paga a la dirección de arriba desde otra billetera.",
  "funds.fee":
    "A esta billetera le faltan unos {missing} para la comisión de la red. Añádele un poco y vuelve a intentarlo.",
  "funds.coin": "{amount} de la moneda propia de la red",
  "copy.address": "Dirección copiada.",
  "copy.link": "Enlace copiado.",
  "status.reconnecting": "Reconectando…",
  "status.merchantVerified": "Verificado por el comercio.",
  "refusal.invalid_request": "Algo no está bien. Revisa lo que escribiste y vuelve a intentarlo.",
  "refusal.invalid_state":
    "Este paso ya no es posible: la solicitud ha avanzado. La página muestra en qué punto está.",
  "refusal.identity_unauthorized":
    "No se pudo verificar. Revísalo y vuelve a intentarlo, o pide al comercio un enlace nuevo.",
  "refusal.rate_limited": "Demasiados intentos por ahora. Espera un poco y vuelve a intentarlo.",
  "refusal.deposit_request_not_found":
    "Esta solicitud de pago no existe. Revisa el enlace que te dio el comercio.",
  "refusal.service_unavailable": "El servicio está ocupado un momento. Vuelve a intentarlo en unos segundos.",
  "refusal.payload_too_large": "Era demasiado largo. Vuelve a intentarlo con menos.",
  "refusal.internal_error": "Algo falló por nuestra parte. Vuelve a intentarlo en un momento.",
  "refusal.wrongCode":
    "Ese código no es correcto o ha caducado. Revisa el último correo o envía un código nuevo.",
  "refusal.badSignature": "No se pudo comprobar la firma de la billetera. Vuelve a firmar en tu billetera.",
  "refusal.other": "Algo falló. Vuelve a intentarlo en un momento."
}

const ptBR: Catalogue = {
  "page.title": "Pagar com USDC",
  "language.label": "Idioma",
  "sandbox.badge": "Ambiente de testes: dinheiro de teste, nada aqui é real",
  "summary.heading": "Solicitação de pagamento",
  "summary.amount": "Valor",
  "summary.received": "Recebido",
  "summary.owed": "Falta pagar",
  "summary.timeLeft": "Tempo restante",
  "deadline.left": "{left} (até {time})",
  "deadline.expired": "expirada",
  "documents.title": "Documentos",
  "mailbox.title": "Confirme seu e-mail",
  "mailbox.intro": "O lojista pede que você confirme o endereço de e-mail que ele tem de você.",
  "mailbox.send": "Enviar um código por e-mail",
  "mailbox.codeLabel": "Código do e-mail",
  "mailbox.confirm": "Confirmar",
  "mailbox.sent": "Enviamos um código para {email}. Digite-o abaixo.",
  "mailbox.confirmed": "E-mail confirmado.",
  "session.title": "Abra esta página a partir do site do lojista",
  "session.intro":
    "Este pagamento precisa ser iniciado na própria página do lojista. Volte a ela e siga o link novamente.",
  "connect.title": "Escolha a carteira com a qual você vai pagar",
  "connect.intro":
    "Sua carteira assina uma breve declaração (não movimenta dinheiro); depois você recebe o endereço para pagar.",
  "connect.button": "Conectar carteira",
  "connect.choose": "Carteira com a qual você vai pagar",
  "pay.title": "Pagar",
  "pay.send": "Envie {amount} na {network} para este endereço:",
  "pay.qrLabel": "Código QR para um app de carteira: o valor e o endereço",
  "pay.copy": "Copiar endereço",
  "pay.fromWallet": "Pagar com esta carteira",
  "phone.title": "Continue no seu celular",
  "phone.intro":
    "Sua carteira está no celular? Escaneie isto com a câmera dele e abra o link no navegador do app da carteira: você continua de onde parou.",
  "phone.qrLabel": "Código QR do link desta página",
  "phone.copy": "Copiar link",
  "apps.title": "Abra esta página no app da sua carteira",
  "apps.intro":
    "Nenhuma carteira foi encontrada neste navegador. Toque no app da sua carteira: esta página abre no navegador dele, onde você conecta a carteira e paga.",
  "apps.other": "Outro app de carteira? Abra o navegador dele e acesse este link:",
  "waiting.title": "Pagamento a caminho",
  "waiting.intro":
    "Mantenha esta página aberta: seu recibo aparece aqui assim que a rede confirmar o pagamento.",
  "receipt.title": "Recibo",
  "receipt.paid": "Pago",
  "receipt.to": "Para",
  "receipt.when": "Quando",
  "receipt.network": "Rede",
  "receipt.transaction": "Transação",
  "receipt.transactions": "Transações",
  "sandbox.title": "Testes",
  "sandbox.intro": "Dinheiro de teste na rede local: nenhuma extensão de carteira é necessária.",
  "sandbox.testWallet": "Usar uma carteira de teste",
  "sandbox.fund": "Abastecer a carteira de teste",
  "sandbox.payExact": "Pagar o valor exato",
  "sandbox.payPartial": "Pagar uma parte",
  "sandbox.payOver": "Pagar a mais",
  "sandbox.payStranger": "Pagar de um desconhecido",
  "sandbox.ready": "Seu endereço de pagamento está pronto (carteira de teste).",
  "sandbox.funded": "A carteira de teste recebeu {amount} USDC de teste.",
  "sandbox.faucetRefused": "A torneira de testes recusou.",
  "sandbox.payFailed": "O pagamento de teste falhou.",
  "sandbox.sent": "{amount} enviado. Aguardando a confirmação da rede…",
  "returned.title": "Devolvido a você",
  "returns.overpayment": "{amount} devolvido porque você enviou mais do que o pedido.",
  "returns.expired_balance":
    "{amount} devolvido porque a solicitação expirou antes de ser paga por completo.",
  "returns.late_transfer":
    "{amount} devolvido porque o pagamento chegou depois que a solicitação foi encerrada.",
  "returns.other": "{amount} devolvido ({reason}).",
  "returns.transaction": "Transação:",
  "state.awaitingMailbox":
    "Confirme seu endereço de e-mail e depois escolha a carteira com a qual vai pagar.",
  "state.awaitingSession": "Abra esta página a partir do site do lojista para continuar.",
  "state.awaitingWallet": "Escolha a carteira com a qual vai pagar para receber o endereço de pagamento.",
  "state.ready": "Pronto: envie o pagamento para o endereço abaixo.",
  "state.partial": "Parte do pagamento chegou. Envie o restante para o mesmo endereço.",
  "state.deposited": "Pagamento recebido por completo; está sendo liquidado.",
  "state.settled": "Pago. Obrigado. Seu recibo está abaixo.",
  "state.expired": "Esta solicitação de pagamento expirou.",
  "state.returned": "Esta solicitação de pagamento está encerrada; o que você enviou foi devolvido.",
  "state.needsAttention": "O lojista está analisando este pagamento; nada mais é necessário de você agora.",
  "merchant.someone": "Um lojista",
  "merchant.subject": "O lojista",
  "merchant.object": "o lojista",
  "contact.ask": "Dúvidas sobre este pagamento? Pergunte a {merchant} e informe o link desta página.",
  "contact.ways": "Dúvidas sobre este pagamento? Fale com {merchant}: {ways}.",
  "wayBack.return": "Retornar para {merchant}",
  "wayBack.back": "Voltar para {merchant}",
  "reason.sending": "Um pagamento está sendo enviado desta página: aguarde.",
  "reason.onItsWay": "Um pagamento está a caminho. Os botões voltam se a rede não o mostrar em dois minutos.",
  "reason.noWallet":
    "Nenhuma carteira está conectada neste navegador. Envie {amount} para o endereço acima a partir da carteira que você escolheu.",
  "reason.theAmount": "o valor",
  "reason.sandboxOnItsWay": "Um pagamento está a caminho: estes botões voltam assim que ele chegar.",
  "notFound.heading": "Solicitação de pagamento não encontrada",
  "notFound.text":
    "Não há nenhuma solicitação de pagamento neste link. Confira o link que o lojista lhe deu ou peça um novo.",
  "network.sandbox": "a rede de testes (cadeia {chain})",
  "network.monad": "Monad (cadeia {chain})",
  "network.monadTestnet": "Monad Testnet (cadeia {chain})",
  "network.other": "cadeia {chain}",
  "wallet.declined": "Você recusou na sua carteira. Tente de novo quando estiver pronto.",
  "wallet.unknownChain":
    "Sua carteira não conhece esta rede (cadeia {chain}). Adicione-a na sua carteira e tente de novo.",
  "wallet.refused": "Sua carteira recusou este pedido. Desbloqueie-a ou tente outra carteira.",
  "wallet.failed": "Sua carteira não conseguiu fazer isso. Tente de novo.",
  "wallet.none":
    "Nenhuma carteira foi encontrada neste navegador. Abra esta página em um navegador com a extensão da sua carteira, ou continue no celular com o código abaixo.",
  "wallet.nonePhone":
    "Nenhuma carteira foi encontrada neste navegador. Abra esta página no app da sua carteira com um dos links abaixo.",
  "wallet.noAccount": "A carteira não compartilhou nenhuma conta.",
  "wallet.switching": "Mudando sua carteira para a rede certa…",
  "wallet.adding": "Sua carteira ainda não conhece {network}: aprove a inclusão dela na sua carteira…",
  "wallet.sign":
    "Assine a declaração na sua carteira: ela prova que a carteira é sua e não movimenta dinheiro.",
  "wallet.ready": "Seu endereço de pagamento está pronto.",
  "wallet.confirmTransfer": "Confirme a transferência na sua carteira…",
  "pay.reconnect": "Reconectar carteira",
  "wallet.attested": "Pagando com a sua carteira {account}",
  "wallet.otherAccount":
    "Sua carteira está na conta {actual}, mas este pagamento foi preparado para {expected}. Mude para {expected} na sua carteira e tente de novo.",
  "wallet.notConnected":
    "Sua carteira {account} não está conectada neste navegador. Reconecte-a, ou envie {amount} a partir dela para o endereço acima.",
  "wallet.wrongChain": "Sua carteira continua em outra rede. Mude-a para {network} e tente de novo.",
  "wallet.pendingRequest":
    "Sua carteira já tem uma solicitação aguardando: abra a carteira para respondê-la.",
  "wallet.insufficientFunds":
    "Sua carteira diz que não tem o suficiente para pagar isto e a taxa da rede. Adicione fundos e tente de novo.",
  "wallet.disconnected": "Sua carteira não está conectada à rede. Verifique-a e tente de novo.",
  "wallet.submitted": "Sua carteira enviou a transferência. Aguardando a confirmação da rede…",
  "wallet.confirmed": "A rede confirmou sua transferência. A solicitação vai mostrá-la em instantes…",
  "wallet.reverted":
    "A transferência falhou na rede: nenhum USDC saiu da sua carteira, só a taxa da rede foi usada. Toque em Pagar com esta carteira para tentar de novo.",
  "wallet.replaced":
    "Sua carteira substituiu esta transferência por outra. Se o pagamento não aparecer aqui em um minuto, toque em Pagar com esta carteira para tentar de novo.",
  "wallet.dropped":
    "A rede descartou esta transferência: nada foi pago. Toque em Pagar com esta carteira para tentar de novo.",
  "wallet.stillPending":
    "A transferência continua aguardando depois de dez minutos. Acelere-a ou cancele-a na sua carteira; Pagar com esta carteira volta a estar disponível se precisar.",
  "wallet.followElsewhere":
    "Volte a sua carteira para {network} para que esta página possa acompanhar sua transferência.",
  "funds.usdc":
    "Esta carteira tem {have}: faltam {missing} para pagar {amount}. Adicione USDC a ela, ou pague para o endereço acima com outra carteira.",
  "funds.fee":
    "Esta carteira precisa de cerca de {missing} a mais para a taxa da rede. Adicione um pouco e tente de novo.",
  "funds.coin": "{amount} da moeda própria da rede",
  "copy.address": "Endereço copiado.",
  "copy.link": "Link copiado.",
  "status.reconnecting": "Reconectando…",
  "status.merchantVerified": "Verificado pelo lojista.",
  "refusal.invalid_request": "Algo não parece certo. Confira o que você digitou e tente de novo.",
  "refusal.invalid_state":
    "Esta etapa não é mais possível: a solicitação avançou. A página mostra em que ponto ela está.",
  "refusal.identity_unauthorized":
    "Não foi possível verificar. Confira e tente de novo, ou peça um novo link ao lojista.",
  "refusal.rate_limited": "Tentativas demais por agora. Espere um pouco e tente de novo.",
  "refusal.deposit_request_not_found":
    "Esta solicitação de pagamento não existe. Confira o link que o lojista lhe deu.",
  "refusal.service_unavailable": "O serviço está ocupado no momento. Tente de novo em alguns segundos.",
  "refusal.payload_too_large": "Ficou longo demais. Tente de novo com menos.",
  "refusal.internal_error": "Algo deu errado do nosso lado. Tente de novo em instantes.",
  "refusal.wrongCode":
    "Esse código não está certo ou expirou. Confira o e-mail mais recente ou envie um novo código.",
  "refusal.badSignature":
    "Não foi possível verificar a assinatura da carteira. Assine de novo na sua carteira.",
  "refusal.other": "Algo deu errado. Tente de novo em instantes."
}

const fr: Catalogue = {
  "page.title": "Payer en USDC",
  "language.label": "Langue",
  "sandbox.badge": "Bac à sable : argent de test uniquement, rien n'est réel ici",
  "summary.heading": "Demande de paiement",
  "summary.amount": "Montant",
  "summary.received": "Reçu",
  "summary.owed": "Reste dû",
  "summary.timeLeft": "Temps restant",
  "deadline.left": "{left} (jusqu'à {time})",
  "deadline.expired": "expirée",
  "documents.title": "Pièces jointes",
  "mailbox.title": "Confirmez votre adresse e-mail",
  "mailbox.intro": "Le marchand vous demande de confirmer l'adresse e-mail qu'il a pour vous.",
  "mailbox.send": "M'envoyer un code par e-mail",
  "mailbox.codeLabel": "Code reçu par e-mail",
  "mailbox.confirm": "Valider",
  "mailbox.sent": "Nous avons envoyé un code à {email}. Saisissez-le ci-dessous.",
  "mailbox.confirmed": "Adresse e-mail confirmée.",
  "session.title": "Ouvrez cette page depuis le site du marchand",
  "session.intro":
    "Ce paiement doit être lancé depuis la page du marchand. Retournez-y et suivez de nouveau son lien.",
  "connect.title": "Choisissez le portefeuille avec lequel vous paierez",
  "connect.intro":
    "Votre portefeuille signe une courte déclaration (aucun argent ne bouge) ; vous obtenez ensuite l'adresse à payer.",
  "connect.button": "Connecter le portefeuille",
  "connect.choose": "Portefeuille avec lequel payer",
  "pay.title": "Payer",
  "pay.send": "Envoyez {amount} sur {network} à cette adresse :",
  "pay.qrLabel": "Code QR pour une application de portefeuille : le montant et l'adresse",
  "pay.copy": "Copier l'adresse",
  "pay.fromWallet": "Payer depuis ce portefeuille",
  "phone.title": "Continuer sur votre téléphone",
  "phone.intro":
    "Votre portefeuille est sur votre téléphone ? Scannez ceci avec son appareil photo et ouvrez le lien dans le navigateur de l'application : vous reprenez là où vous en êtes.",
  "phone.qrLabel": "Code QR du lien de cette page",
  "phone.copy": "Copier le lien",
  "apps.title": "Ouvrir cette page dans l'application de votre portefeuille",
  "apps.intro":
    "Aucun portefeuille trouvé dans ce navigateur. Touchez l'application de votre portefeuille : cette page s'ouvre dans son propre navigateur, où vous connectez votre portefeuille et payez.",
  "apps.other": "Une autre application de portefeuille ? Ouvrez son navigateur et allez à ce lien :",
  "waiting.title": "Paiement en route",
  "waiting.intro":
    "Gardez cette page ouverte : votre reçu s'affiche ici dès que le réseau a confirmé le paiement.",
  "receipt.title": "Reçu de paiement",
  "receipt.paid": "Payé",
  "receipt.to": "À",
  "receipt.when": "Date",
  "receipt.network": "Réseau",
  "receipt.transaction": "Opération",
  "receipt.transactions": "Opérations",
  "sandbox.title": "Bac à sable",
  "sandbox.intro":
    "De l'argent de test sur la chaîne locale : aucune extension de portefeuille n'est nécessaire.",
  "sandbox.testWallet": "Utiliser un portefeuille de test",
  "sandbox.fund": "Approvisionner le portefeuille de test",
  "sandbox.payExact": "Payer le montant exact",
  "sandbox.payPartial": "Payer une partie",
  "sandbox.payOver": "Payer trop",
  "sandbox.payStranger": "Payer depuis un inconnu",
  "sandbox.ready": "Votre adresse de paiement est prête (portefeuille de test).",
  "sandbox.funded": "Le portefeuille de test a reçu {amount} USDC de test.",
  "sandbox.faucetRefused": "Le robinet de test a refusé.",
  "sandbox.payFailed": "Le paiement de test a échoué.",
  "sandbox.sent": "{amount} envoyé. En attente de la confirmation du réseau…",
  "returned.title": "Qui vous a été rendu",
  "returns.overpayment": "{amount} rendu parce que vous avez envoyé plus que demandé.",
  "returns.expired_balance": "{amount} rendu parce que la demande a expiré avant d'être entièrement payée.",
  "returns.late_transfer": "{amount} rendu parce que le paiement est arrivé après la clôture de la demande.",
  "returns.other": "{amount} rendu ({reason}).",
  "returns.transaction": "Opération :",
  "state.awaitingMailbox":
    "Confirmez votre adresse e-mail, puis choisissez le portefeuille avec lequel vous paierez.",
  "state.awaitingSession": "Ouvrez cette page depuis le site du marchand pour continuer.",
  "state.awaitingWallet":
    "Choisissez le portefeuille avec lequel vous paierez pour obtenir l'adresse de paiement.",
  "state.ready": "Prêt : envoyez le paiement à l'adresse ci-dessous.",
  "state.partial": "Une partie du paiement est arrivée. Envoyez le reste à la même adresse.",
  "state.deposited": "Paiement reçu en totalité ; il est en cours de règlement.",
  "state.settled": "Payé. Merci. Votre reçu se trouve ci-dessous.",
  "state.expired": "Cette demande de paiement a expiré.",
  "state.returned": "Cette demande de paiement est close ; ce que vous avez envoyé vous a été rendu.",
  "state.needsAttention":
    "Le marchand examine ce paiement ; vous n'avez rien d'autre à faire pour l'instant.",
  "merchant.someone": "Un marchand",
  "merchant.subject": "Le marchand",
  "merchant.object": "le marchand",
  "contact.ask":
    "Des questions sur ce paiement ? Adressez-vous à {merchant} en indiquant le lien de cette page.",
  "contact.ways": "Des questions sur ce paiement ? Contactez {merchant} : {ways}.",
  "wayBack.return": "Retourner chez {merchant}",
  "wayBack.back": "Revenir chez {merchant}",
  "reason.sending": "Un paiement part de cette page : patientez.",
  "reason.onItsWay":
    "Un paiement est en route. Les boutons reviennent si le réseau ne l'a pas montré d'ici deux minutes.",
  "reason.noWallet":
    "Aucun portefeuille n'est connecté dans ce navigateur. Envoyez {amount} à l'adresse ci-dessus depuis le portefeuille choisi.",
  "reason.theAmount": "le montant",
  "reason.sandboxOnItsWay": "Un paiement est en route : ces boutons reviennent dès qu'il est arrivé.",
  "notFound.heading": "Demande de paiement introuvable",
  "notFound.text":
    "Aucune demande de paiement ne correspond à ce lien. Vérifiez le lien donné par le marchand ou demandez-lui-en un nouveau.",
  "network.sandbox": "le réseau de test du bac à sable (chaîne {chain})",
  "network.monad": "Monad (chaîne {chain})",
  "network.monadTestnet": "Monad Testnet (chaîne {chain})",
  "network.other": "chaîne {chain}",
  "wallet.declined": "Vous avez refusé dans votre portefeuille. Réessayez quand vous serez prêt.",
  "wallet.unknownChain":
    "Votre portefeuille ne connaît pas ce réseau (chaîne {chain}). Ajoutez-le dans votre portefeuille, puis réessayez.",
  "wallet.refused":
    "Votre portefeuille a refusé cette demande. Déverrouillez-le ou essayez un autre portefeuille.",
  "wallet.failed": "Votre portefeuille n'a pas pu le faire. Réessayez.",
  "wallet.none":
    "Aucun portefeuille trouvé dans ce navigateur. Ouvrez cette page dans un navigateur doté de l'extension de votre portefeuille, ou continuez sur votre téléphone avec le code ci-dessous.",
  "wallet.nonePhone":
    "Aucun portefeuille trouvé dans ce navigateur. Ouvrez cette page dans l'application de votre portefeuille avec l'un des liens ci-dessous.",
  "wallet.noAccount": "Le portefeuille n'a partagé aucun compte.",
  "wallet.switching": "Passage de votre portefeuille sur le bon réseau…",
  "wallet.adding":
    "Votre portefeuille ne connaît pas encore {network} : acceptez de l'ajouter dans votre portefeuille…",
  "wallet.sign":
    "Signez la déclaration dans votre portefeuille : elle prouve qu'il vous appartient et ne déplace aucun argent.",
  "wallet.ready": "Votre adresse de paiement est prête.",
  "wallet.confirmTransfer": "Confirmez le virement dans votre portefeuille…",
  "pay.reconnect": "Reconnecter le portefeuille",
  "wallet.attested": "Paiement depuis votre portefeuille {account}",
  "wallet.otherAccount":
    "Votre portefeuille est sur le compte {actual}, mais ce paiement a été préparé pour {expected}. Passez sur {expected} dans votre portefeuille, puis réessayez.",
  "wallet.notConnected":
    "Votre portefeuille {account} n'est pas connecté dans ce navigateur. Reconnectez-le, ou envoyez {amount} depuis celui-ci à l'adresse ci-dessus.",
  "wallet.wrongChain":
    "Votre portefeuille est toujours sur un autre réseau. Passez-le sur {network}, puis réessayez.",
  "wallet.pendingRequest": "Votre portefeuille a déjà une demande en attente : ouvrez-le pour y répondre.",
  "wallet.insufficientFunds":
    "Votre portefeuille indique qu'il ne contient pas assez pour payer ceci et les frais du réseau. Ajoutez des fonds, puis réessayez.",
  "wallet.disconnected": "Votre portefeuille n'est pas connecté au réseau. Vérifiez-le, puis réessayez.",
  "wallet.submitted": "Votre portefeuille a envoyé le virement. En attente de la confirmation du réseau…",
  "wallet.confirmed": "Le réseau a confirmé votre virement. La demande l'affichera dans un instant…",
  "wallet.reverted":
    "Le virement a échoué sur le réseau : aucun USDC n'a quitté votre portefeuille, seuls les frais du réseau ont été utilisés. Appuyez sur Payer depuis ce portefeuille pour réessayer.",
  "wallet.replaced":
    "Votre portefeuille a remplacé ce virement par un autre. Si le paiement n'apparaît pas ici d'ici une minute, appuyez sur Payer depuis ce portefeuille pour réessayer.",
  "wallet.dropped":
    "Le réseau a abandonné ce virement : rien n'a été payé. Appuyez sur Payer depuis ce portefeuille pour réessayer.",
  "wallet.stillPending":
    "Le virement attend toujours après dix minutes. Accélérez-le ou annulez-le dans votre portefeuille ; Payer depuis ce portefeuille est de nouveau disponible si besoin.",
  "wallet.followElsewhere":
    "Repassez votre portefeuille sur {network} pour que cette page puisse suivre votre virement.",
  "funds.usdc":
    "Ce portefeuille contient {have} : il manque {missing} pour payer {amount}. Ajoutez-y des USDC, ou payez à l'adresse ci-dessus depuis un autre portefeuille.",
  "funds.fee":
    "Il manque environ {missing} à ce portefeuille pour les frais du réseau. Ajoutez-en un peu, puis réessayez.",
  "funds.coin": "{amount} de la monnaie propre au réseau",
  "copy.address": "Adresse copiée.",
  "copy.link": "Lien copié.",
  "status.reconnecting": "Reconnexion…",
  "status.merchantVerified": "Vérifié par le marchand.",
  "refusal.invalid_request": "Cela ne semble pas correct. Vérifiez votre saisie et réessayez.",
  "refusal.invalid_state":
    "Cette étape n'est plus possible : la demande a évolué. La page indique où elle en est.",
  "refusal.identity_unauthorized":
    "Cela n'a pas pu être vérifié. Vérifiez et réessayez, ou demandez un nouveau lien au marchand.",
  "refusal.rate_limited": "Trop d'essais pour le moment. Patientez un peu, puis réessayez.",
  "refusal.deposit_request_not_found":
    "Cette demande de paiement n'existe pas. Vérifiez le lien donné par le marchand.",
  "refusal.service_unavailable": "Le service est momentanément occupé. Réessayez dans quelques secondes.",
  "refusal.payload_too_large": "C'était trop long. Réessayez avec moins.",
  "refusal.internal_error": "Un problème est survenu de notre côté. Réessayez dans un instant.",
  "refusal.wrongCode":
    "Ce code n'est pas le bon, ou il a expiré. Consultez le dernier e-mail, ou demandez un nouveau code.",
  "refusal.badSignature": "La signature du portefeuille n'a pas pu être vérifiée. Signez de nouveau.",
  "refusal.other": "Un problème est survenu. Réessayez dans un instant."
}

const de: Catalogue = {
  "page.title": "Mit USDC bezahlen",
  "language.label": "Sprache",
  "sandbox.badge": "Testumgebung: nur Testgeld, nichts hier ist echt",
  "summary.heading": "Zahlungsanforderung",
  "summary.amount": "Betrag",
  "summary.received": "Eingegangen",
  "summary.owed": "Noch offen",
  "summary.timeLeft": "Verbleibende Zeit",
  "deadline.left": "{left} (bis {time})",
  "deadline.expired": "abgelaufen",
  "documents.title": "Dokumente",
  "mailbox.title": "E-Mail-Adresse bestätigen",
  "mailbox.intro": "Der Händler bittet Sie, die E-Mail-Adresse zu bestätigen, die er von Ihnen hat.",
  "mailbox.send": "Code per E-Mail senden",
  "mailbox.codeLabel": "Code aus der E-Mail",
  "mailbox.confirm": "Bestätigen",
  "mailbox.sent": "Wir haben einen Code an {email} gesendet. Geben Sie ihn unten ein.",
  "mailbox.confirmed": "E-Mail-Adresse bestätigt.",
  "session.title": "Öffnen Sie diese Seite über die Website des Händlers",
  "session.intro":
    "Diese Zahlung muss auf der Seite des Händlers begonnen werden. Kehren Sie dorthin zurück und folgen Sie dem Link erneut.",
  "connect.title": "Wählen Sie das Wallet, mit dem Sie bezahlen",
  "connect.intro":
    "Ihr Wallet signiert eine kurze Erklärung (dabei wird kein Geld bewegt); danach erhalten Sie die Zahlungsadresse.",
  "connect.button": "Wallet verbinden",
  "connect.choose": "Wallet, mit dem Sie bezahlen",
  "pay.title": "Bezahlen",
  "pay.send": "Senden Sie {amount} über {network} an diese Adresse:",
  "pay.qrLabel": "QR-Code für eine Wallet-App: Betrag und Adresse",
  "pay.copy": "Adresse kopieren",
  "pay.fromWallet": "Mit diesem Wallet bezahlen",
  "phone.title": "Auf dem Handy weitermachen",
  "phone.intro":
    "Ihr Wallet ist auf dem Handy? Scannen Sie dies mit dessen Kamera und öffnen Sie den Link im Browser Ihrer Wallet-App: Sie machen dort weiter, wo Sie gerade sind.",
  "phone.qrLabel": "QR-Code mit dem Link dieser Seite",
  "phone.copy": "Link kopieren",
  "apps.title": "Diese Seite in Ihrer Wallet-App öffnen",
  "apps.intro":
    "In diesem Browser wurde kein Wallet gefunden. Tippen Sie auf Ihre Wallet-App: Diese Seite öffnet sich in deren eigenem Browser, wo Sie Ihr Wallet verbinden und bezahlen.",
  "apps.other": "Eine andere Wallet-App? Öffnen Sie deren Browser und rufen Sie diesen Link auf:",
  "waiting.title": "Zahlung unterwegs",
  "waiting.intro":
    "Lassen Sie diese Seite geöffnet: Ihr Beleg erscheint hier, sobald das Netzwerk die Zahlung bestätigt hat.",
  "receipt.title": "Beleg",
  "receipt.paid": "Bezahlt",
  "receipt.to": "An",
  "receipt.when": "Zeitpunkt",
  "receipt.network": "Netzwerk",
  "receipt.transaction": "Transaktion",
  "receipt.transactions": "Transaktionen",
  "sandbox.title": "Testumgebung",
  "sandbox.intro": "Testgeld auf der lokalen Chain: keine Wallet-Erweiterung nötig.",
  "sandbox.testWallet": "Test-Wallet verwenden",
  "sandbox.fund": "Test-Wallet aufladen",
  "sandbox.payExact": "Genau bezahlen",
  "sandbox.payPartial": "Teilweise bezahlen",
  "sandbox.payOver": "Zu viel bezahlen",
  "sandbox.payStranger": "Von einem Fremden bezahlen",
  "sandbox.ready": "Ihre Zahlungsadresse ist bereit (Test-Wallet).",
  "sandbox.funded": "Das Test-Wallet hat {amount} Test-USDC erhalten.",
  "sandbox.faucetRefused": "Der Test-Faucet hat abgelehnt.",
  "sandbox.payFailed": "Die Testzahlung ist fehlgeschlagen.",
  "sandbox.sent": "{amount} gesendet. Warten auf die Bestätigung durch das Netzwerk…",
  "returned.title": "An Sie zurückgesendet",
  "returns.overpayment": "{amount} zurückgesendet, weil Sie mehr als verlangt gesendet haben.",
  "returns.expired_balance":
    "{amount} zurückgesendet, weil die Anforderung abgelaufen ist, bevor sie vollständig bezahlt war.",
  "returns.late_transfer":
    "{amount} zurückgesendet, weil die Zahlung nach dem Abschluss der Anforderung eingegangen ist.",
  "returns.other": "{amount} zurückgesendet ({reason}).",
  "returns.transaction": "Transaktion:",
  "state.awaitingMailbox":
    "Bestätigen Sie Ihre E-Mail-Adresse und wählen Sie dann das Wallet, mit dem Sie bezahlen.",
  "state.awaitingSession": "Öffnen Sie diese Seite über die Website des Händlers, um fortzufahren.",
  "state.awaitingWallet": "Wählen Sie das Wallet, mit dem Sie bezahlen, um die Zahlungsadresse zu erhalten.",
  "state.ready": "Bereit: Senden Sie die Zahlung an die Adresse unten.",
  "state.partial": "Ein Teil der Zahlung ist eingegangen. Senden Sie den Rest an dieselbe Adresse.",
  "state.deposited": "Zahlung vollständig eingegangen; sie wird abgewickelt.",
  "state.settled": "Bezahlt. Vielen Dank. Ihr Beleg steht unten.",
  "state.expired": "Diese Zahlungsanforderung ist abgelaufen.",
  "state.returned":
    "Diese Zahlungsanforderung ist geschlossen; was Sie gesendet haben, wurde zurückgesendet.",
  "state.needsAttention": "Der Händler prüft diese Zahlung; von Ihnen ist gerade nichts weiter nötig.",
  "merchant.someone": "Ein Händler",
  "merchant.subject": "Der Händler",
  "merchant.object": "den Händler",
  "contact.ask":
    "Fragen zu dieser Zahlung? Wenden Sie sich an {merchant} und nennen Sie den Link dieser Seite.",
  "contact.ways": "Fragen zu dieser Zahlung? Kontakt zu {merchant}: {ways}.",
  "wayBack.return": "Zurück zu {merchant}",
  "wayBack.back": "Zurück zur Seite von {merchant}",
  "reason.sending": "Von dieser Seite wird gerade eine Zahlung gesendet: Bitte warten.",
  "reason.onItsWay":
    "Eine Zahlung ist unterwegs. Die Schaltflächen kommen zurück, wenn das Netzwerk sie nicht binnen zwei Minuten zeigt.",
  "reason.noWallet":
    "In diesem Browser ist kein Wallet verbunden. Senden Sie {amount} von dem gewählten Wallet an die Adresse oben.",
  "reason.theAmount": "den Betrag",
  "reason.sandboxOnItsWay":
    "Eine Zahlung ist unterwegs: Diese Schaltflächen kommen zurück, sobald sie eingegangen ist.",
  "notFound.heading": "Zahlungsanforderung nicht gefunden",
  "notFound.text":
    "Unter diesem Link gibt es keine Zahlungsanforderung. Prüfen Sie den Link des Händlers oder bitten Sie ihn um einen neuen.",
  "network.sandbox": "das Testnetzwerk der Testumgebung (Chain {chain})",
  "network.monad": "Monad (Chain {chain})",
  "network.monadTestnet": "Monad Testnet (Chain {chain})",
  "network.other": "Chain {chain}",
  "wallet.declined": "Sie haben in Ihrem Wallet abgelehnt. Versuchen Sie es erneut, wenn Sie so weit sind.",
  "wallet.unknownChain":
    "Ihr Wallet kennt dieses Netzwerk nicht (Chain {chain}). Fügen Sie es in Ihrem Wallet hinzu und versuchen Sie es erneut.",
  "wallet.refused":
    "Ihr Wallet hat diese Anfrage abgelehnt. Entsperren Sie es oder versuchen Sie ein anderes Wallet.",
  "wallet.failed": "Ihr Wallet konnte das nicht ausführen. Versuchen Sie es erneut.",
  "wallet.none":
    "In diesem Browser wurde kein Wallet gefunden. Öffnen Sie diese Seite in einem Browser mit Ihrer Wallet-Erweiterung oder machen Sie mit dem Code unten auf dem Handy weiter.",
  "wallet.nonePhone":
    "In diesem Browser wurde kein Wallet gefunden. Öffnen Sie diese Seite mit einem der Links unten in Ihrer Wallet-App.",
  "wallet.noAccount": "Das Wallet hat kein Konto freigegeben.",
  "wallet.switching": "Ihr Wallet wird auf das richtige Netzwerk umgestellt…",
  "wallet.adding":
    "Ihr Wallet kennt {network} noch nicht: Bestätigen Sie in Ihrem Wallet, dass es hinzugefügt wird…",
  "wallet.sign":
    "Signieren Sie die Erklärung in Ihrem Wallet: Sie beweist, dass das Wallet Ihnen gehört, und bewegt kein Geld.",
  "wallet.ready": "Ihre Zahlungsadresse ist bereit.",
  "wallet.confirmTransfer": "Bestätigen Sie die Überweisung in Ihrem Wallet…",
  "pay.reconnect": "Wallet erneut verbinden",
  "wallet.attested": "Zahlung aus Ihrem Wallet {account}",
  "wallet.otherAccount":
    "Ihr Wallet ist auf dem Konto {actual}, diese Zahlung wurde aber für {expected} eingerichtet. Wechseln Sie in Ihrem Wallet zu {expected} und versuchen Sie es erneut.",
  "wallet.notConnected":
    "Ihr Wallet {account} ist in diesem Browser nicht verbunden. Verbinden Sie es erneut, oder senden Sie {amount} daraus an die Adresse oben.",
  "wallet.wrongChain":
    "Ihr Wallet ist noch in einem anderen Netzwerk. Wechseln Sie zu {network} und versuchen Sie es erneut.",
  "wallet.pendingRequest":
    "In Ihrem Wallet wartet bereits eine Anfrage: Öffnen Sie Ihr Wallet, um sie zu beantworten.",
  "wallet.insufficientFunds":
    "Ihr Wallet meldet, dass das Guthaben für diese Zahlung und die Netzwerkgebühr nicht reicht. Laden Sie Guthaben auf und versuchen Sie es erneut.",
  "wallet.disconnected":
    "Ihr Wallet ist nicht mit dem Netzwerk verbunden. Prüfen Sie es und versuchen Sie es erneut.",
  "wallet.submitted":
    "Ihr Wallet hat die Überweisung gesendet. Warten auf die Bestätigung durch das Netzwerk…",
  "wallet.confirmed": "Das Netzwerk hat Ihre Überweisung bestätigt. Die Anfrage zeigt sie gleich an…",
  "wallet.reverted":
    "Die Überweisung ist im Netzwerk gescheitert: Es hat kein USDC Ihr Wallet verlassen, nur die Netzwerkgebühr wurde verbraucht. Tippen Sie auf „Mit diesem Wallet bezahlen“, um es erneut zu versuchen.",
  "wallet.replaced":
    "Ihr Wallet hat diese Überweisung durch eine andere ersetzt. Wenn die Zahlung nicht innerhalb einer Minute hier erscheint, tippen Sie auf „Mit diesem Wallet bezahlen“, um es erneut zu versuchen.",
  "wallet.dropped":
    "Das Netzwerk hat diese Überweisung verworfen: Es wurde nichts bezahlt. Tippen Sie auf „Mit diesem Wallet bezahlen“, um es erneut zu versuchen.",
  "wallet.stillPending":
    "Die Überweisung wartet nach zehn Minuten immer noch. Beschleunigen oder stornieren Sie sie in Ihrem Wallet; „Mit diesem Wallet bezahlen“ ist wieder da, falls Sie es brauchen.",
  "wallet.followElsewhere":
    "Wechseln Sie Ihr Wallet zurück zu {network}, damit diese Seite Ihre Überweisung verfolgen kann.",
  "funds.usdc":
    "Dieses Wallet enthält {have}: Es fehlen {missing}, um {amount} zu zahlen. Laden Sie USDC auf, oder zahlen Sie aus einem anderen Wallet an die Adresse oben.",
  "funds.fee":
    "Diesem Wallet fehlen etwa {missing} für die Netzwerkgebühr. Laden Sie etwas auf und versuchen Sie es erneut.",
  "funds.coin": "{amount} der netzwerkeigenen Münze",
  "copy.address": "Adresse kopiert.",
  "copy.link": "Link kopiert.",
  "status.reconnecting": "Verbindung wird wiederhergestellt…",
  "status.merchantVerified": "Vom Händler bestätigt.",
  "refusal.invalid_request":
    "Das sah nicht richtig aus. Prüfen Sie Ihre Eingabe und versuchen Sie es erneut.",
  "refusal.invalid_state":
    "Dieser Schritt ist nicht mehr möglich: Die Anforderung ist weiter. Die Seite zeigt, wo sie steht.",
  "refusal.identity_unauthorized":
    "Das konnte nicht bestätigt werden. Prüfen Sie es und versuchen Sie es erneut, oder bitten Sie den Händler um einen neuen Link.",
  "refusal.rate_limited": "Zu viele Versuche. Warten Sie kurz und versuchen Sie es dann erneut.",
  "refusal.deposit_request_not_found":
    "Diese Zahlungsanforderung gibt es nicht. Prüfen Sie den Link, den Ihnen der Händler gegeben hat.",
  "refusal.service_unavailable":
    "Der Dienst ist gerade ausgelastet. Versuchen Sie es in ein paar Sekunden erneut.",
  "refusal.payload_too_large": "Das war zu lang. Versuchen Sie es mit weniger.",
  "refusal.internal_error": "Bei uns ist etwas schiefgegangen. Versuchen Sie es gleich noch einmal.",
  "refusal.wrongCode":
    "Dieser Code stimmt nicht oder ist abgelaufen. Sehen Sie in der neuesten E-Mail nach oder fordern Sie einen neuen Code an.",
  "refusal.badSignature":
    "Die Signatur des Wallets konnte nicht geprüft werden. Signieren Sie erneut in Ihrem Wallet.",
  "refusal.other": "Etwas ist schiefgegangen. Versuchen Sie es gleich noch einmal."
}

const tr: Catalogue = {
  "page.title": "USDC ile öde",
  "language.label": "Dil",
  "sandbox.badge": "Deneme ortamı: yalnızca test parası, buradaki hiçbir şey gerçek değil",
  "summary.heading": "Ödeme talebi",
  "summary.amount": "Tutar",
  "summary.received": "Alınan",
  "summary.owed": "Kalan borç",
  "summary.timeLeft": "Kalan süre",
  "deadline.left": "{left} (bitiş: {time})",
  "deadline.expired": "süresi doldu",
  "documents.title": "Belgeler",
  "mailbox.title": "E-posta adresinizi doğrulayın",
  "mailbox.intro": "Satıcı, sizin için kayıtlı e-posta adresini doğrulamanızı istiyor.",
  "mailbox.send": "Bana bir kod gönder",
  "mailbox.codeLabel": "E-postadaki kod",
  "mailbox.confirm": "Doğrula",
  "mailbox.sent": "{email} adresine bir kod gönderdik. Aşağıya girin.",
  "mailbox.confirmed": "E-posta doğrulandı.",
  "session.title": "Bu sayfayı satıcının sitesinden açın",
  "session.intro":
    "Bu ödeme satıcının kendi sayfasından başlatılmalıdır. O sayfaya dönün ve bağlantıyı yeniden izleyin.",
  "connect.title": "Ödeme yapacağınız cüzdanı seçin",
  "connect.intro":
    "Cüzdanınız kısa bir beyanı imzalar (para hareket etmez); ardından ödeme yapacağınız adresi alırsınız.",
  "connect.button": "Cüzdanı bağla",
  "connect.choose": "Ödeme yapacağınız cüzdan",
  "pay.title": "Ödeme",
  "pay.send": "{amount} tutarını {network} üzerinden bu adrese gönderin:",
  "pay.qrLabel": "Cüzdan uygulaması için QR kodu: tutar ve adres",
  "pay.copy": "Adresi kopyala",
  "pay.fromWallet": "Bu cüzdandan öde",
  "phone.title": "Telefonunuzda devam edin",
  "phone.intro":
    "Cüzdanınız telefonunuzda mı? Bunu telefonun kamerasıyla tarayın ve bağlantıyı cüzdan uygulamanızın tarayıcısında açın: kaldığınız yerden devam edersiniz.",
  "phone.qrLabel": "Bu sayfanın bağlantısının QR kodu",
  "phone.copy": "Bağlantıyı kopyala",
  "apps.title": "Bu sayfayı cüzdan uygulamanızda açın",
  "apps.intro":
    "Bu tarayıcıda cüzdan bulunamadı. Cüzdan uygulamanıza dokunun: bu sayfa uygulamanın kendi tarayıcısında açılır, orada cüzdanınızı bağlayıp ödeme yaparsınız.",
  "apps.other": "Başka bir cüzdan uygulaması mı? Onun tarayıcısını açın ve bu bağlantıya gidin:",
  "waiting.title": "Ödeme yolda",
  "waiting.intro": "Bu sayfayı açık tutun: ağ ödemeyi onayladığında makbuzunuz burada görünür.",
  "receipt.title": "Makbuz",
  "receipt.paid": "Ödenen",
  "receipt.to": "Alıcı",
  "receipt.when": "Tarih",
  "receipt.network": "Ağ",
  "receipt.transaction": "İşlem",
  "receipt.transactions": "İşlemler",
  "sandbox.title": "Deneme ortamı",
  "sandbox.intro": "Yerel zincirde test parası: cüzdan eklentisi gerekmez.",
  "sandbox.testWallet": "Test cüzdanı kullan",
  "sandbox.fund": "Test cüzdanına para yükle",
  "sandbox.payExact": "Tam tutarı öde",
  "sandbox.payPartial": "Bir kısmını öde",
  "sandbox.payOver": "Fazla öde",
  "sandbox.payStranger": "Yabancı bir cüzdandan öde",
  "sandbox.ready": "Ödeme adresiniz hazır (test cüzdanı).",
  "sandbox.funded": "Test cüzdanına {amount} test USDC yüklendi.",
  "sandbox.faucetRefused": "Test musluğu reddetti.",
  "sandbox.payFailed": "Deneme ödemesi başarısız oldu.",
  "sandbox.sent": "{amount} gönderildi. Ağın onaylaması bekleniyor…",
  "returned.title": "Size iade edilen",
  "returns.overpayment": "İstenenden fazla gönderdiğiniz için {amount} iade edildi.",
  "returns.expired_balance": "Talep tamamı ödenmeden süresi dolduğu için {amount} iade edildi.",
  "returns.late_transfer": "Ödeme, talep kapandıktan sonra geldiği için {amount} iade edildi.",
  "returns.other": "{amount} iade edildi ({reason}).",
  "returns.transaction": "İşlem:",
  "state.awaitingMailbox": "E-posta adresinizi doğrulayın, ardından ödeme yapacağınız cüzdanı seçin.",
  "state.awaitingSession": "Devam etmek için bu sayfayı satıcının sitesinden açın.",
  "state.awaitingWallet": "Ödeme adresini almak için ödeme yapacağınız cüzdanı seçin.",
  "state.ready": "Hazır: ödemeyi aşağıdaki adrese gönderin.",
  "state.partial": "Ödemenin bir kısmı geldi. Kalanını aynı adrese gönderin.",
  "state.deposited": "Ödemenin tamamı alındı; hesaplaşması yapılıyor.",
  "state.settled": "Ödendi. Teşekkürler. Makbuzunuz aşağıda.",
  "state.expired": "Bu ödeme talebinin süresi doldu.",
  "state.returned": "Bu ödeme talebi kapandı; gönderdikleriniz iade edildi.",
  "state.needsAttention": "Satıcı bu ödemeyi inceliyor; şu anda sizden başka bir şey gerekmiyor.",
  "merchant.someone": "Bir satıcı",
  "merchant.subject": "Satıcı",
  "merchant.object": "satıcı",
  "contact.ask":
    "Bu ödemeyle ilgili sorunuz mu var? {merchant} ile iletişime geçin ve bu sayfanın bağlantısını belirtin.",
  "contact.ways": "Bu ödemeyle ilgili sorunuz mu var? {merchant} iletişim: {ways}.",
  "wayBack.return": "{merchant} sitesine dön",
  "wayBack.back": "{merchant} sitesine geri git",
  "reason.sending": "Bu sayfadan bir ödeme gönderiliyor: lütfen bekleyin.",
  "reason.onItsWay": "Bir ödeme yolda. Ağ onu iki dakika içinde göstermezse düğmeler geri gelir.",
  "reason.noWallet":
    "Bu tarayıcıda bağlı bir cüzdan yok. {amount} tutarını seçtiğiniz cüzdandan yukarıdaki adrese gönderin.",
  "reason.theAmount": "tutarı",
  "reason.sandboxOnItsWay": "Bir ödeme yolda: ödeme ulaştığında bu düğmeler geri gelir.",
  "notFound.heading": "Ödeme talebi bulunamadı",
  "notFound.text":
    "Bu bağlantıda bir ödeme talebi yok. Satıcının verdiği bağlantıyı kontrol edin ya da yenisini isteyin.",
  "network.sandbox": "deneme ortamının test ağı (zincir {chain})",
  "network.monad": "Monad (zincir {chain})",
  "network.monadTestnet": "Monad Testnet (zincir {chain})",
  "network.other": "zincir {chain}",
  "wallet.declined": "Cüzdanınızda reddettiniz. Hazır olduğunuzda yeniden deneyin.",
  "wallet.unknownChain":
    "Cüzdanınız bu ağı tanımıyor (zincir {chain}). Ağı cüzdanınıza ekleyin, sonra yeniden deneyin.",
  "wallet.refused": "Cüzdanınız bu isteği reddetti. Kilidini açın ya da başka bir cüzdan deneyin.",
  "wallet.failed": "Cüzdanınız bunu yapamadı. Yeniden deneyin.",
  "wallet.none":
    "Bu tarayıcıda cüzdan bulunamadı. Bu sayfayı cüzdan eklentinizin olduğu bir tarayıcıda açın ya da aşağıdaki kodla telefonunuzda devam edin.",
  "wallet.nonePhone":
    "Bu tarayıcıda cüzdan bulunamadı. Bu sayfayı aşağıdaki bağlantılardan biriyle cüzdan uygulamanızda açın.",
  "wallet.noAccount": "Cüzdan hiçbir hesap paylaşmadı.",
  "wallet.switching": "Cüzdanınız doğru ağa geçiriliyor…",
  "wallet.adding": "Cüzdanınız {network} ağını henüz tanımıyor: cüzdanınızda eklenmesini onaylayın…",
  "wallet.sign":
    "Beyanı cüzdanınızda imzalayın: cüzdanın size ait olduğunu kanıtlar ve para hareket ettirmez.",
  "wallet.ready": "Ödeme adresiniz hazır.",
  "wallet.confirmTransfer": "Transferi cüzdanınızda onaylayın…",
  "pay.reconnect": "Cüzdanı yeniden bağla",
  "wallet.attested": "Ödeme cüzdanınızdan yapılıyor: {account}",
  "wallet.otherAccount":
    "Cüzdanınız {actual} hesabında, ancak bu ödeme {expected} için hazırlandı. Cüzdanınızda {expected} hesabına geçin ve yeniden deneyin.",
  "wallet.notConnected":
    "{account} cüzdanınız bu tarayıcıda bağlı değil. Yeniden bağlayın ya da {amount} tutarını bu cüzdandan yukarıdaki adrese gönderin.",
  "wallet.wrongChain": "Cüzdanınız hâlâ başka bir ağda. {network} ağına geçin ve yeniden deneyin.",
  "wallet.pendingRequest": "Cüzdanınızda bekleyen bir istek var: yanıtlamak için cüzdanınızı açın.",
  "wallet.insufficientFunds":
    "Cüzdanınız bu ödeme ve ağ ücreti için yeterli bakiye olmadığını söylüyor. Bakiye ekleyin ve yeniden deneyin.",
  "wallet.disconnected": "Cüzdanınız ağa bağlı değil. Kontrol edin ve yeniden deneyin.",
  "wallet.submitted": "Cüzdanınız transferi gönderdi. Ağın onaylaması bekleniyor…",
  "wallet.confirmed": "Ağ transferinizi onayladı. Talep birazdan bunu gösterecek…",
  "wallet.reverted":
    "Transfer ağda başarısız oldu: cüzdanınızdan hiç USDC çıkmadı, yalnızca ağ ücreti harcandı. Yeniden denemek için Bu cüzdandan öde düğmesine basın.",
  "wallet.replaced":
    "Cüzdanınız bu transferi başka biriyle değiştirdi. Ödeme bir dakika içinde burada görünmezse yeniden denemek için Bu cüzdandan öde düğmesine basın.",
  "wallet.dropped":
    "Ağ bu transferi düşürdü: hiçbir şey ödenmedi. Yeniden denemek için Bu cüzdandan öde düğmesine basın.",
  "wallet.stillPending":
    "Transfer on dakikadır hâlâ bekliyor. Cüzdanınızda hızlandırın ya da iptal edin; gerekirse Bu cüzdandan öde yeniden kullanılabilir.",
  "wallet.followElsewhere":
    "Bu sayfanın transferinizi izleyebilmesi için cüzdanınızı yeniden {network} ağına geçirin.",
  "funds.usdc":
    "Bu cüzdanda {have} var: {amount} ödemek için {missing} daha gerekiyor. Cüzdana USDC ekleyin ya da başka bir cüzdandan yukarıdaki adrese ödeyin.",
  "funds.fee":
    "Bu cüzdanın ağ ücreti için yaklaşık {missing} daha ihtiyacı var. Biraz ekleyin ve yeniden deneyin.",
  "funds.coin": "ağın kendi parasından {amount}",
  "copy.address": "Adres kopyalandı.",
  "copy.link": "Bağlantı kopyalandı.",
  "status.reconnecting": "Yeniden bağlanılıyor…",
  "status.merchantVerified": "Satıcı tarafından doğrulandı.",
  "refusal.invalid_request": "Bu doğru görünmüyor. Girdiğiniz bilgiyi kontrol edip yeniden deneyin.",
  "refusal.invalid_state": "Bu adım artık mümkün değil: talep ilerledi. Sayfa son durumu gösteriyor.",
  "refusal.identity_unauthorized":
    "Bu doğrulanamadı. Kontrol edip yeniden deneyin ya da satıcıdan yeni bir bağlantı isteyin.",
  "refusal.rate_limited": "Şimdilik çok fazla deneme yapıldı. Biraz bekleyip yeniden deneyin.",
  "refusal.deposit_request_not_found":
    "Böyle bir ödeme talebi yok. Satıcının verdiği bağlantıyı kontrol edin.",
  "refusal.service_unavailable": "Hizmet şu an meşgul. Birkaç saniye sonra yeniden deneyin.",
  "refusal.payload_too_large": "Bu çok uzundu. Daha kısasıyla yeniden deneyin.",
  "refusal.internal_error": "Bizim tarafımızda bir sorun oluştu. Birazdan yeniden deneyin.",
  "refusal.wrongCode":
    "Bu kod doğru değil ya da süresi doldu. En son e-postaya bakın ya da yeni bir kod gönderin.",
  "refusal.badSignature": "Cüzdanın imzası kontrol edilemedi. Cüzdanınızda yeniden imzalayın.",
  "refusal.other": "Bir sorun oluştu. Birazdan yeniden deneyin."
}

const ja: Catalogue = {
  "page.title": "USDC で支払う",
  "language.label": "言語",
  "sandbox.badge": "サンドボックス：テスト用のお金のみで、ここには本物は何もありません",
  "summary.heading": "支払いリクエスト",
  "summary.amount": "金額",
  "summary.received": "受領済み",
  "summary.owed": "未払い",
  "summary.timeLeft": "残り時間",
  "deadline.left": "{left}（{time} まで）",
  "deadline.expired": "期限切れ",
  "documents.title": "書類",
  "mailbox.title": "メールアドレスの確認",
  "mailbox.intro": "加盟店が登録しているあなたのメールアドレスの確認を求めています。",
  "mailbox.send": "コードをメールで送る",
  "mailbox.codeLabel": "メールに記載のコード",
  "mailbox.confirm": "確認する",
  "mailbox.sent": "{email} にコードを送りました。下に入力してください。",
  "mailbox.confirmed": "メールアドレスを確認しました。",
  "session.title": "このページは加盟店のサイトから開いてください",
  "session.intro":
    "この支払いは加盟店のページから始める必要があります。そのページに戻り、もう一度リンクから開いてください。",
  "connect.title": "支払いに使うウォレットを選んでください",
  "connect.intro":
    "ウォレットで短い確認文に署名します（お金は動きません）。その後、支払先アドレスが表示されます。",
  "connect.button": "ウォレットを接続",
  "connect.choose": "支払いに使うウォレット",
  "pay.title": "支払い",
  "pay.send": "{amount} を {network} でこのアドレスに送ってください：",
  "pay.qrLabel": "ウォレットアプリ用の QR コード：金額とアドレス",
  "pay.copy": "アドレスをコピー",
  "pay.fromWallet": "このウォレットで支払う",
  "phone.title": "スマートフォンで続ける",
  "phone.intro":
    "ウォレットはスマートフォンにありますか？そのカメラでこれを読み取り、ウォレットアプリのブラウザでリンクを開いてください。今の続きから進められます。",
  "phone.qrLabel": "このページのリンクの QR コード",
  "phone.copy": "リンクをコピー",
  "apps.title": "ウォレットアプリでこのページを開く",
  "apps.intro":
    "このブラウザにウォレットが見つかりません。お使いのウォレットアプリをタップしてください。このページがアプリ内のブラウザで開き、そこでウォレットを接続して支払えます。",
  "apps.other":
    "ほかのウォレットアプリの場合は、そのアプリのブラウザを開いてこのリンクにアクセスしてください:",
  "waiting.title": "支払いを処理中",
  "waiting.intro":
    "このページを開いたままにしてください。ネットワークが支払いを確認すると、ここに領収書が表示されます。",
  "receipt.title": "領収書",
  "receipt.paid": "支払額",
  "receipt.to": "支払先",
  "receipt.when": "日時",
  "receipt.network": "ネットワーク",
  "receipt.transaction": "トランザクション",
  "receipt.transactions": "トランザクション一覧",
  "sandbox.title": "サンドボックス",
  "sandbox.intro": "ローカルチェーン上のテスト用のお金です。ウォレット拡張機能は不要です。",
  "sandbox.testWallet": "テスト用ウォレットを使う",
  "sandbox.fund": "テスト用ウォレットに入金",
  "sandbox.payExact": "ちょうど支払う",
  "sandbox.payPartial": "一部を支払う",
  "sandbox.payOver": "多めに支払う",
  "sandbox.payStranger": "第三者から支払う",
  "sandbox.ready": "支払先アドレスの準備ができました（テスト用ウォレット）。",
  "sandbox.funded": "テスト用ウォレットに {amount} テスト USDC が入金されました。",
  "sandbox.faucetRefused": "テスト用の蛇口が拒否しました。",
  "sandbox.payFailed": "テスト支払いに失敗しました。",
  "sandbox.sent": "{amount} を送りました。ネットワークの確認を待っています…",
  "returned.title": "あなたへの返金",
  "returns.overpayment": "求められた額より多く送られたため、{amount} を返金しました。",
  "returns.expired_balance": "全額が支払われる前にリクエストの期限が切れたため、{amount} を返金しました。",
  "returns.late_transfer": "リクエストが締め切られた後に支払いが届いたため、{amount} を返金しました。",
  "returns.other": "{amount} を返金しました（{reason}）。",
  "returns.transaction": "トランザクション：",
  "state.awaitingMailbox": "メールアドレスを確認してから、支払いに使うウォレットを選んでください。",
  "state.awaitingSession": "続けるには、このページを加盟店のサイトから開いてください。",
  "state.awaitingWallet": "支払いに使うウォレットを選ぶと、支払先アドレスが表示されます。",
  "state.ready": "準備完了：下のアドレスに支払ってください。",
  "state.partial": "支払いの一部が届きました。残りを同じアドレスに送ってください。",
  "state.deposited": "全額を受け取りました。精算中です。",
  "state.settled": "支払い済みです。ありがとうございました。領収書は下にあります。",
  "state.expired": "この支払いリクエストは期限切れです。",
  "state.returned": "この支払いリクエストは終了しました。送られた分は返金されています。",
  "state.needsAttention": "加盟店がこの支払いを確認中です。今のところ、あなたがすることはありません。",
  "merchant.someone": "加盟店",
  "merchant.subject": "加盟店",
  "merchant.object": "加盟店",
  "contact.ask":
    "この支払いについてのご質問は、このページのリンクを添えて {merchant} にお問い合わせください。",
  "contact.ways": "この支払いについてのご質問は {merchant} へ：{ways}。",
  "wayBack.return": "{merchant} に戻る",
  "wayBack.back": "{merchant} のページへ戻る",
  "reason.sending": "このページから支払いを送信中です。お待ちください。",
  "reason.onItsWay":
    "支払いが送信中です。2 分以内にネットワークに表示されなければ、ボタンが再び使えるようになります。",
  "reason.noWallet":
    "このブラウザにはウォレットが接続されていません。選んだウォレットから上のアドレスへ {amount} を送ってください。",
  "reason.theAmount": "金額",
  "reason.sandboxOnItsWay": "支払いが送信中です。届き次第、これらのボタンが再び使えるようになります。",
  "notFound.heading": "支払いリクエストが見つかりません",
  "notFound.text":
    "このリンクには支払いリクエストがありません。加盟店から受け取ったリンクを確認するか、新しいリンクを依頼してください。",
  "network.sandbox": "サンドボックスのテストネットワーク（チェーン {chain}）",
  "network.monad": "Monad（チェーン {chain}）",
  "network.monadTestnet": "Monad Testnet（チェーン {chain}）",
  "network.other": "チェーン {chain}",
  "wallet.declined": "ウォレットで拒否されました。準備ができたらもう一度お試しください。",
  "wallet.unknownChain":
    "ウォレットがこのネットワーク（チェーン {chain}）を認識していません。ウォレットに追加してから、もう一度お試しください。",
  "wallet.refused":
    "ウォレットがこのリクエストを拒否しました。ロックを解除するか、別のウォレットをお試しください。",
  "wallet.failed": "ウォレットで処理できませんでした。もう一度お試しください。",
  "wallet.none":
    "このブラウザにウォレットが見つかりません。ウォレット拡張機能のあるブラウザでこのページを開くか、下のコードでスマートフォンから続けてください。",
  "wallet.nonePhone":
    "このブラウザにウォレットが見つかりません。下のリンクのいずれかから、ウォレットアプリでこのページを開いてください。",
  "wallet.noAccount": "ウォレットからアカウントが共有されませんでした。",
  "wallet.switching": "ウォレットを正しいネットワークに切り替えています…",
  "wallet.adding": "ウォレットはまだ {network} を知りません。ウォレットで追加を承認してください…",
  "wallet.sign":
    "ウォレットで確認文に署名してください。ウォレットがあなたのものであることを証明するもので、お金は動きません。",
  "wallet.ready": "支払先アドレスの準備ができました。",
  "wallet.confirmTransfer": "ウォレットで送金を承認してください…",
  "pay.reconnect": "ウォレットを再接続",
  "wallet.attested": "お支払い元のウォレット: {account}",
  "wallet.otherAccount":
    "ウォレットはアカウント {actual} になっていますが、この支払いは {expected} 用に準備されています。ウォレットで {expected} に切り替えてから、もう一度お試しください。",
  "wallet.notConnected":
    "ウォレット {account} はこのブラウザーに接続されていません。再接続するか、そのウォレットから上のアドレスへ {amount} を送ってください。",
  "wallet.wrongChain":
    "ウォレットはまだ別のネットワークにあります。{network} に切り替えてから、もう一度お試しください。",
  "wallet.pendingRequest": "ウォレットに未処理のリクエストがあります。ウォレットを開いて応答してください。",
  "wallet.insufficientFunds":
    "ウォレットによると、この支払いとネットワーク手数料に足りる残高がありません。入金してから、もう一度お試しください。",
  "wallet.disconnected":
    "ウォレットがネットワークに接続されていません。確認してから、もう一度お試しください。",
  "wallet.submitted": "ウォレットが送金を送信しました。ネットワークの確認を待っています…",
  "wallet.confirmed": "ネットワークが送金を確認しました。まもなくリクエストに反映されます…",
  "wallet.reverted":
    "送金はネットワーク上で失敗しました。ウォレットから USDC は出ておらず、ネットワーク手数料だけが使われました。「このウォレットで支払う」を押して、もう一度お試しください。",
  "wallet.replaced":
    "ウォレットがこの送金を別の送金に置き換えました。1 分以内にここに支払いが表示されない場合は、「このウォレットで支払う」を押して、もう一度お試しください。",
  "wallet.dropped":
    "ネットワークがこの送金を破棄しました。何も支払われていません。「このウォレットで支払う」を押して、もう一度お試しください。",
  "wallet.stillPending":
    "送金は 10 分たってもまだ待機中です。ウォレットで高速化するかキャンセルしてください。必要なら「このウォレットで支払う」を再び使えます。",
  "wallet.followElsewhere": "このページが送金を追跡できるよう、ウォレットを {network} に戻してください。",
  "funds.usdc":
    "このウォレットの残高は {have} です。{amount} を支払うにはあと {missing} 必要です。USDC を追加するか、別のウォレットから上のアドレスへ支払ってください。",
  "funds.fee":
    "このウォレットはネットワーク手数料にあと約 {missing} 必要です。少し追加してから、もう一度お試しください。",
  "funds.coin": "ネットワーク独自の通貨 {amount}",
  "copy.address": "アドレスをコピーしました。",
  "copy.link": "リンクをコピーしました。",
  "status.reconnecting": "再接続しています…",
  "status.merchantVerified": "加盟店により確認されました。",
  "refusal.invalid_request": "入力内容が正しくないようです。確認して、もう一度お試しください。",
  "refusal.invalid_state":
    "この手順はもう行えません。リクエストの状況が変わりました。現在の状況はページに表示されています。",
  "refusal.identity_unauthorized":
    "確認できませんでした。見直してもう一度お試しいただくか、加盟店に新しいリンクを依頼してください。",
  "refusal.rate_limited": "試行回数が多すぎます。少し待ってから、もう一度お試しください。",
  "refusal.deposit_request_not_found":
    "この支払いリクエストは存在しません。加盟店から受け取ったリンクを確認してください。",
  "refusal.service_unavailable": "サービスが混み合っています。数秒後にもう一度お試しください。",
  "refusal.payload_too_large": "長すぎます。短くしてもう一度お試しください。",
  "refusal.internal_error": "こちら側で問題が発生しました。しばらくしてからもう一度お試しください。",
  "refusal.wrongCode":
    "コードが正しくないか、期限が切れています。最新のメールを確認するか、新しいコードを送ってください。",
  "refusal.badSignature": "ウォレットの署名を確認できませんでした。ウォレットでもう一度署名してください。",
  "refusal.other": "問題が発生しました。しばらくしてからもう一度お試しください。"
}

const zhCN: Catalogue = {
  "page.title": "使用 USDC 付款",
  "language.label": "语言",
  "sandbox.badge": "沙盒：仅限测试资金，这里的一切都不是真实的",
  "summary.heading": "付款请求",
  "summary.amount": "金额",
  "summary.received": "已收到",
  "summary.owed": "尚欠",
  "summary.timeLeft": "剩余时间",
  "deadline.left": "{left}（截至 {time}）",
  "deadline.expired": "已过期",
  "documents.title": "文件",
  "mailbox.title": "确认您的电子邮箱",
  "mailbox.intro": "商家请您确认他们掌握的您的电子邮箱地址。",
  "mailbox.send": "给我发送验证码",
  "mailbox.codeLabel": "邮件中的验证码",
  "mailbox.confirm": "确认",
  "mailbox.sent": "我们已向 {email} 发送验证码。请在下方输入。",
  "mailbox.confirmed": "电子邮箱已确认。",
  "session.title": "请从商家网站打开此页面",
  "session.intro": "此付款必须从商家自己的页面发起。请返回该页面，再次点击其链接。",
  "connect.title": "选择您要用来付款的钱包",
  "connect.intro": "您的钱包会签署一份简短声明（不会转移任何资金）；之后您会得到付款地址。",
  "connect.button": "连接钱包",
  "connect.choose": "用于付款的钱包",
  "pay.title": "付款",
  "pay.send": "请通过{network}将 {amount} 发送到此地址：",
  "pay.qrLabel": "供钱包应用扫描的二维码：金额和地址",
  "pay.copy": "复制地址",
  "pay.fromWallet": "用此钱包付款",
  "phone.title": "在手机上继续",
  "phone.intro": "钱包在手机上？请用手机相机扫描此码，并在钱包应用的浏览器中打开链接：您将从当前步骤继续。",
  "phone.qrLabel": "本页面链接的二维码",
  "phone.copy": "复制链接",
  "apps.title": "在钱包应用中打开此页面",
  "apps.intro":
    "此浏览器中未找到钱包。点按您的钱包应用：此页面将在其内置浏览器中打开，您可在那里连接钱包并付款。",
  "apps.other": "使用其他钱包应用？请打开其浏览器并访问此链接：",
  "waiting.title": "付款处理中",
  "waiting.intro": "请保持此页面打开：网络确认付款后，收据将显示在这里。",
  "receipt.title": "收据",
  "receipt.paid": "已付",
  "receipt.to": "收款方",
  "receipt.when": "时间",
  "receipt.network": "网络",
  "receipt.transaction": "交易",
  "receipt.transactions": "交易记录",
  "sandbox.title": "沙盒",
  "sandbox.intro": "本地链上的测试资金：无需钱包扩展。",
  "sandbox.testWallet": "使用测试钱包",
  "sandbox.fund": "为测试钱包充值",
  "sandbox.payExact": "足额付款",
  "sandbox.payPartial": "部分付款",
  "sandbox.payOver": "多付",
  "sandbox.payStranger": "由陌生钱包付款",
  "sandbox.ready": "您的付款地址已就绪（测试钱包）。",
  "sandbox.funded": "测试钱包已收到 {amount} 测试 USDC。",
  "sandbox.faucetRefused": "测试水龙头拒绝了请求。",
  "sandbox.payFailed": "测试付款失败。",
  "sandbox.sent": "已发送 {amount}。正在等待网络确认…",
  "returned.title": "已退还给您",
  "returns.overpayment": "由于您支付的金额超过所需，已退还 {amount}。",
  "returns.expired_balance": "由于请求在付清前已过期，已退还 {amount}。",
  "returns.late_transfer": "由于付款在请求关闭后才到账，已退还 {amount}。",
  "returns.other": "已退还 {amount}（{reason}）。",
  "returns.transaction": "交易：",
  "state.awaitingMailbox": "请确认您的电子邮箱地址，然后选择您要用来付款的钱包。",
  "state.awaitingSession": "请从商家网站打开此页面以继续。",
  "state.awaitingWallet": "选择您要用来付款的钱包，以获取付款地址。",
  "state.ready": "已就绪：请将款项发送到下方地址。",
  "state.partial": "部分款项已到账。请将剩余款项发送到同一地址。",
  "state.deposited": "已全额收到付款，正在结算。",
  "state.settled": "已付款。谢谢。您的收据在下方。",
  "state.expired": "此付款请求已过期。",
  "state.returned": "此付款请求已关闭；您发送的款项已退还。",
  "state.needsAttention": "商家正在核查此付款；目前您无需再做任何操作。",
  "merchant.someone": "某商家",
  "merchant.subject": "商家",
  "merchant.object": "商家",
  "contact.ask": "对此付款有疑问？请联系{merchant}，并提供本页面的链接。",
  "contact.ways": "对此付款有疑问？请联系{merchant}：{ways}。",
  "wayBack.return": "返回{merchant}",
  "wayBack.back": "回到{merchant}",
  "reason.sending": "正在从本页面发送一笔付款：请稍候。",
  "reason.onItsWay": "一笔付款正在途中。如果两分钟内网络上仍未显示，按钮会恢复可用。",
  "reason.noWallet": "此浏览器中没有连接钱包。请从您选择的钱包向上方地址发送 {amount}。",
  "reason.theAmount": "该金额",
  "reason.sandboxOnItsWay": "一笔付款正在途中：到账后这些按钮会恢复可用。",
  "notFound.heading": "未找到付款请求",
  "notFound.text": "此链接下没有付款请求。请检查商家给您的链接，或请商家提供新的链接。",
  "network.sandbox": "沙盒测试网络（链 {chain}）",
  "network.monad": "Monad（链 {chain}）",
  "network.monadTestnet": "Monad Testnet（链 {chain}）",
  "network.other": "链 {chain}",
  "wallet.declined": "您在钱包中拒绝了请求。准备好后请重试。",
  "wallet.unknownChain": "您的钱包不认识此网络（链 {chain}）。请在钱包中添加后重试。",
  "wallet.refused": "您的钱包拒绝了此请求。请解锁钱包，或换一个钱包试试。",
  "wallet.failed": "您的钱包无法完成此操作。请重试。",
  "wallet.none": "此浏览器中未找到钱包。请在装有钱包扩展的浏览器中打开此页面，或用下方的二维码在手机上继续。",
  "wallet.nonePhone": "此浏览器中未找到钱包。请通过下方任一链接在钱包应用中打开此页面。",
  "wallet.noAccount": "钱包没有提供任何账户。",
  "wallet.switching": "正在将您的钱包切换到正确的网络…",
  "wallet.adding": "您的钱包还不认识 {network}：请在钱包中批准添加…",
  "wallet.sign": "请在钱包中签署声明：它证明钱包属于您，不会转移任何资金。",
  "wallet.ready": "您的付款地址已就绪。",
  "wallet.confirmTransfer": "请在钱包中确认转账…",
  "pay.reconnect": "重新连接钱包",
  "wallet.attested": "付款钱包：{account}",
  "wallet.otherAccount":
    "你的钱包当前是账户 {actual}，但这笔付款是为 {expected} 设置的。请在钱包中切换到 {expected}，然后重试。",
  "wallet.notConnected":
    "你的钱包 {account} 未在此浏览器中连接。请重新连接，或从该钱包向上面的地址发送 {amount}。",
  "wallet.wrongChain": "你的钱包仍在其他网络上。请切换到 {network}，然后重试。",
  "wallet.pendingRequest": "你的钱包中已有一个待处理的请求：请打开钱包处理它。",
  "wallet.insufficientFunds": "你的钱包显示余额不足以支付这笔款项和网络手续费。请充值后重试。",
  "wallet.disconnected": "你的钱包未连接到网络。请检查后重试。",
  "wallet.submitted": "你的钱包已发送转账。正在等待网络确认…",
  "wallet.confirmed": "网络已确认你的转账。付款请求稍后就会显示…",
  "wallet.reverted":
    "转账在网络上失败了：你的钱包没有转出任何 USDC，只花费了网络手续费。请点击“用此钱包付款”重试。",
  "wallet.replaced":
    "你的钱包用另一笔转账替换了这笔转账。如果一分钟内这里没有显示付款，请点击“用此钱包付款”重试。",
  "wallet.dropped": "网络丢弃了这笔转账：没有支付任何款项。请点击“用此钱包付款”重试。",
  "wallet.stillPending": "转账十分钟后仍在等待。请在钱包中加速或取消它；如有需要，“用此钱包付款”已重新可用。",
  "wallet.followElsewhere": "请把钱包切换回 {network}，以便此页面跟踪你的转账。",
  "funds.usdc":
    "此钱包有 {have}：支付 {amount} 还差 {missing}。请向其中添加 USDC，或用另一个钱包向上面的地址付款。",
  "funds.fee": "此钱包还需要约 {missing} 用于网络手续费。请充值一点后重试。",
  "funds.coin": "{amount} 网络自有代币",
  "copy.address": "地址已复制。",
  "copy.link": "链接已复制。",
  "status.reconnecting": "正在重新连接…",
  "status.merchantVerified": "已由商家验证。",
  "refusal.invalid_request": "内容似乎不正确。请检查您输入的内容后重试。",
  "refusal.invalid_state": "此步骤已无法进行：请求状态已变化。页面显示了当前状态。",
  "refusal.identity_unauthorized": "无法验证。请检查后重试，或请商家提供新的链接。",
  "refusal.rate_limited": "尝试次数过多。请稍等片刻后重试。",
  "refusal.deposit_request_not_found": "此付款请求不存在。请检查商家给您的链接。",
  "refusal.service_unavailable": "服务暂时繁忙。请几秒后重试。",
  "refusal.payload_too_large": "内容过长。请减少后重试。",
  "refusal.internal_error": "我们这边出了问题。请稍后重试。",
  "refusal.wrongCode": "验证码不正确或已过期。请查看最新的邮件，或重新发送验证码。",
  "refusal.badSignature": "无法核验钱包的签名。请在钱包中重新签名。",
  "refusal.other": "出了点问题。请稍后重试。"
}

/** The languages the checkout speaks, in the picker's order, each named in itself (never translated). */
export const LANGUAGES = [
  { tag: "en", name: "English" },
  { tag: "es", name: "Español" },
  { tag: "pt-BR", name: "Português (Brasil)" },
  { tag: "fr", name: "Français" },
  { tag: "de", name: "Deutsch" },
  { tag: "tr", name: "Türkçe" },
  { tag: "ja", name: "日本語" },
  { tag: "zh-CN", name: "简体中文" }
] as const

export type Language = (typeof LANGUAGES)[number]["tag"]

export const messages: { readonly [L in Language]: Catalogue } = {
  en,
  es,
  "pt-BR": ptBR,
  fr,
  de,
  tr,
  ja,
  "zh-CN": zhCN
}

/** A message by id with its values, kept as such so it can be said again in another language. */
export interface Msg {
  readonly id: MessageId
  readonly params?: Readonly<Record<string, string>>
}

/** The `{name}` placeholders of a message, sorted. */
export const placeholders = (text: string): Array<string> =>
  [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "").sort()

/** A message with its placeholders filled; a placeholder without a value is left as written. */
export const fill = (text: string, params: Readonly<Record<string, string>> = {}): string =>
  text.replace(/\{(\w+)\}/g, (whole, name: string) => params[name] ?? whole)

const isLanguage = (tag: string): tag is Language => LANGUAGES.some((l) => l.tag === tag)

/**
 * The catalogue for a browser's preferences (`navigator.languages`, best first): the first tag we speak, by
 * language alone (`es-MX` → `es`, any `pt` → `pt-BR`). Chinese in Traditional script (`zh-TW`, `zh-HK`, `zh-Hant`)
 * is not answered in Simplified: the next preference is tried, then English.
 */
export const chooseLanguage = (preferred: ReadonlyArray<string>): Language => {
  for (const tag of preferred) {
    const lower = tag.toLowerCase()
    const base = lower.split("-")[0] ?? ""
    if (base === "zh") {
      if (/-(hant|tw|hk|mo)(-|$)/.test(lower)) continue
      return "zh-CN"
    }
    if (base === "pt") return "pt-BR"
    if (isLanguage(base)) return base
  }
  return "en"
}

/** A stored choice, if it names a language we speak (storage may hold anything). */
export const storedLanguage = (value: string | null): Language | undefined =>
  value !== null && isLanguage(value) ? value : undefined
