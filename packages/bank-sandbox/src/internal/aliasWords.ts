/**
 * The sandbox bank's alias words: Spanish, without accents, 3 to 6 letters (so three of them and
 * two dots fit the 20-character alias limit). 288 of them make 23.9 million aliases: the sandbox
 * keeps that many accounts open at once before `fresh` needs more than a draw or two (48 words,
 * 110,592 aliases, ran out under load).
 */
// prettier-ignore
export const ALIAS_WORDS = [
  "sol", "rio", "mate", "luna", "mar", "cielo", "nube", "pampa", "monte", "lago", "roca", "arena",
  "flor", "hoja", "rama", "campo", "tango", "vino", "pan", "casa", "puma", "condor", "zorro",
  "lobo", "gato", "perro", "toro", "oso", "ceibo", "trigo", "maiz", "yerba", "limon", "pera",
  "uva", "nuez", "piedra", "brisa", "nieve", "fuego", "valle", "isla", "playa", "bosque", "faro",
  "barco", "tren", "ombu", "agua", "aire", "tierra", "lluvia", "viento", "trueno", "rayo",
  "niebla", "hielo", "costa", "bahia", "cerro", "loma", "llano", "selva", "prado", "huerta",
  "jardin", "patio", "calle", "plaza", "puente", "torre", "muro", "techo", "puerta", "llave",
  "mesa", "silla", "cama", "vaso", "plato", "taza", "olla", "jarra", "copa", "banana", "cereza",
  "melon", "sandia", "kiwi", "coco", "palta", "tomate", "papa", "batata", "ajo", "choclo", "arroz",
  "avena", "cebada", "queso", "leche", "miel", "dulce", "torta", "asado", "locro", "guiso", "sopa",
  "vaca", "oveja", "cabra", "cerdo", "burro", "mula", "conejo", "liebre", "ciervo", "llama",
  "vicuna", "tatu", "nandu", "loro", "garza", "pato", "ganso", "gallo", "pollo", "paloma",
  "halcon", "aguila", "buho", "cisne", "pez", "trucha", "dorado", "surubi", "libro", "papel",
  "lapiz", "tinta", "carta", "sobre", "mapa", "reloj", "radio", "disco", "foto", "cuadro", "vela",
  "espejo", "cuerda", "red", "remo", "ancla", "timon", "rojo", "azul", "verde", "gris", "plata",
  "cobre", "hierro", "bronce", "oro", "perla", "jade", "ambar", "coral", "rubi", "norte", "sur",
  "este", "oeste", "alba", "ocaso", "tarde", "noche", "dia", "semana", "mes", "verano", "otono",
  "enero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "bombo", "piano", "flauta",
  "violin", "arpa", "canto", "baile", "ritmo", "copla", "zamba", "cueca", "alegre", "feliz",
  "claro", "suave", "firme", "fresco", "tibio", "lindo", "bravo", "noble", "sabio", "justo",
  "libre", "pleno", "vivo", "calmo", "manso", "leal", "hilo", "lana", "tela", "manta", "poncho",
  "boina", "bota", "chal", "faja", "cinto", "bolso", "cesta", "caja", "cofre", "baul", "nido",
  "huevo", "pluma", "ala", "pico", "garra", "cola", "crin", "lomo", "pata", "hueso", "cuerno",
  "sal", "canela", "clavo", "anis", "menta", "romero", "laurel", "arco", "flecha", "lanza",
  "escudo", "casco", "espada", "tambor", "trompa", "pino", "roble", "sauce", "cedro", "alamo",
  "olivo", "nogal", "cactus", "musgo", "junco", "cardo", "trebol", "rosa", "clavel", "jazmin",
  "lirio", "dalia", "malva", "cometa", "orbita", "barro", "cal", "yeso", "vidrio", "madera",
  "corcho", "goma", "mimbre"
] as const
