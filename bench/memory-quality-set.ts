// The retrieval-quality set: personal facts with a question each, written so that the
// question shares (almost) no content word with its fact, plus generated distractor
// facts from the same domains. Written for keel; not taken from any public dataset.

export interface QualityCase {
  fact: string;
  question: string;
}

export const QUALITY_CASES: readonly QualityCase[] = [
  { fact: 'My dog Rex is a golden retriever.', question: 'What kind of pet do I own?' },
  { fact: 'I am allergic to peanuts.', question: 'Which food makes me ill?' },
  {
    fact: 'My sister Anna works as a nurse at the city hospital.',
    question: "What is my sibling's job?",
  },
  { fact: 'I drive a blue Toyota Corolla.', question: 'Which car do I have?' },
  { fact: 'My flight to Lisbon departs on March 3rd.', question: 'When is my trip to Portugal?' },
  {
    fact: 'I prefer tea over coffee in the morning.',
    question: 'What hot beverage do I like at breakfast?',
  },
  { fact: "My wife's birthday is on June 12.", question: 'When was my spouse born?' },
  {
    fact: 'I play the violin in a community orchestra.',
    question: 'Which musical instrument do I perform with?',
  },
  {
    fact: 'Our wifi password is written on the fridge.',
    question: 'Where can I find the internet login code?',
  },
  {
    fact: 'My dentist appointment is next Tuesday at 9am.',
    question: 'When do I get my teeth checked?',
  },
  { fact: 'I run five kilometres every Sunday morning.', question: 'How often do I go jogging?' },
  { fact: 'My son Leo is learning to swim.', question: 'What is my child practising in the pool?' },
  {
    fact: 'The spare house key is under the flower pot.',
    question: 'Where did we hide a backup for the front lock?',
  },
  { fact: 'I work as a software engineer at a bank.', question: 'What is my profession?' },
  {
    fact: 'My favourite cuisine is Thai food.',
    question: 'Which type of dishes do I enjoy eating most?',
  },
  { fact: "I'm vegetarian and never eat meat.", question: 'Do I have any dietary restrictions?' },
  { fact: "Our landlord's name is Mr. Patel.", question: 'Who owns the apartment we rent?' },
  { fact: 'I moved to Berlin in 2019.', question: 'When did I relocate to Germany?' },
  { fact: 'My blood type is O negative.', question: 'Which transfusion group am I?' },
  { fact: 'I take vitamin D supplements every day.', question: 'Which pills do I swallow daily?' },
  {
    fact: 'My car insurance renews in September.',
    question: 'When does the vehicle coverage policy expire?',
  },
  {
    fact: "The kids' school starts at 8:15.",
    question: 'What time must the children be in class?',
  },
  {
    fact: 'My grandmother lives in a small village near Krakow.',
    question: 'Where does grandma reside in Poland?',
  },
  { fact: "I'm learning Japanese on weekends.", question: 'Which foreign language am I studying?' },
  { fact: 'We adopted a kitten named Miso.', question: 'What is the name of our new cat?' },
  {
    fact: 'My gym membership costs 40 euros a month.',
    question: 'How much do I pay for fitness training?',
  },
  { fact: 'I usually go to bed around 11 pm.', question: 'When do I fall asleep at night?' },
  {
    fact: 'My best friend Tom lives in Toronto.',
    question: 'Where is my closest buddy based in Canada?',
  },
  {
    fact: 'The boiler was serviced last October.',
    question: 'When was the heating system last maintained?',
  },
  { fact: 'I hate horror movies.', question: 'Which film genre do I dislike?' },
  { fact: 'My daughter is afraid of spiders.', question: 'What creepy crawlies scare my girl?' },
  { fact: 'My passport expires in 2027.', question: 'When is my travel document no longer valid?' },
  { fact: 'We are saving money for a house deposit.', question: 'Why are we putting cash aside?' },
  { fact: 'I broke my left arm skiing in 2015.', question: 'Have I ever fractured a bone?' },
  { fact: 'My manager is called Sarah.', question: 'Who is my boss at the office?' },
  { fact: 'I drink my coffee black without sugar.', question: 'How do I like my espresso?' },
  {
    fact: 'Our anniversary dinner is booked at an Italian restaurant.',
    question: 'Where are we eating to celebrate our wedding date?',
  },
  {
    fact: 'The car needs new tyres before winter.',
    question: 'What does the automobile require ahead of the snowy months?',
  },
  {
    fact: 'I volunteer at the animal shelter on Saturdays.',
    question: 'Where do I help out with abandoned pets?',
  },
  { fact: 'My father is recovering from knee surgery.', question: 'Which operation did dad have?' },
  {
    fact: 'I keep my important documents in the desk drawer.',
    question: 'Where are the vital papers stored?',
  },
  { fact: 'My phone number changed last month.', question: 'Did I get a new mobile contact?' },
  {
    fact: "I'm training for a marathon in April.",
    question: 'What race am I preparing for this spring?',
  },
  {
    fact: 'The plumber is coming on Thursday afternoon.',
    question: 'When will someone fix the leaking pipes?',
  },
  { fact: 'My favourite colour is green.', question: 'Which shade do I like best?' },
  { fact: 'I studied physics at university.', question: 'What was my college major?' },
  { fact: 'My laptop is a five-year-old ThinkPad.', question: 'How old is my computer?' },
  {
    fact: 'I dream of visiting Iceland next summer.',
    question: 'Which Nordic island nation do I want to see?',
  },
  { fact: 'Our neighbours have two noisy parrots.', question: 'Which birds live next door?' },
  {
    fact: 'I meditate for ten minutes after waking up.',
    question: 'What mindfulness routine do I do each morning?',
  },
  {
    fact: 'My mortgage payment is due on the first of each month.',
    question: 'When does the home loan instalment get paid?',
  },
  { fact: "I'm lactose intolerant.", question: 'Can I have milk or cheese?' },
  {
    fact: 'My brother is a pilot for a regional airline.',
    question: 'What does my sibling do for a living in aviation?',
  },
  {
    fact: 'We grow tomatoes and basil on the balcony.',
    question: 'Which vegetables and herbs do we cultivate at home?',
  },
  { fact: 'I get migraines when I skip lunch.', question: 'What triggers my headaches?' },
];

// Distractors: generated from templates and word lists with a fixed seed, so every run
// sees the same 240 facts. They cover the same life domains as the cases above.
const PEOPLE = [
  'Maria',
  'Jonas',
  'Priya',
  'Kenji',
  'Lucia',
  'Omar',
  'Greta',
  'Samuel',
  'Ines',
  'Victor',
  'Hannah',
  'Diego',
];
const PLACES = [
  'Madrid',
  'Oslo',
  'Vienna',
  'Nairobi',
  'Seoul',
  'Dublin',
  'Chicago',
  'Athens',
  'Lyon',
  'Prague',
  'Austin',
  'Porto',
];
const THINGS = [
  'umbrella',
  'bicycle',
  'printer',
  'sofa',
  'guitar',
  'camera',
  'backpack',
  'lamp',
  'kettle',
  'tent',
  'scarf',
  'watch',
];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = ['January', 'February', 'April', 'May', 'July', 'August', 'November', 'December'];
const TOPICS = [
  'history',
  'chemistry',
  'economics',
  'gardening',
  'poetry',
  'astronomy',
  'sculpture',
  'chess',
];
const TEMPLATES: ((pick: <T>(list: readonly T[]) => T) => string)[] = [
  (p) => `${p(PEOPLE)} borrowed my ${p(THINGS)} and has not returned it yet.`,
  (p) => `The conference in ${p(PLACES)} takes place in ${p(MONTHS)}.`,
  (p) => `${p(PEOPLE)} recommended a podcast about ${p(TOPICS)}.`,
  (p) => `The ${p(THINGS)} I ordered online should arrive on ${p(DAYS)}.`,
  (p) => `${p(PEOPLE)} is moving to ${p(PLACES)} for a new job.`,
  (p) => `I lent ${p(PEOPLE)} a book on ${p(TOPICS)} last ${p(MONTHS)}.`,
  (p) => `The team meeting was moved to ${p(DAYS)} afternoon.`,
  (p) => `My old ${p(THINGS)} is stored in the basement.`,
  (p) => `${p(PEOPLE)} and ${p(PEOPLE)} are organising a picnic in ${p(MONTHS)}.`,
  (p) => `The museum in ${p(PLACES)} has a great exhibition on ${p(TOPICS)}.`,
  (p) => `Remember to return the ${p(THINGS)} to the shop before ${p(DAYS)}.`,
  (p) => `${p(PEOPLE)} sent a postcard from ${p(PLACES)}.`,
  (p) => `The evening class on ${p(TOPICS)} starts on ${p(DAYS)}.`,
  (p) => `We bought a second-hand ${p(THINGS)} at the flea market.`,
  (p) => `${p(PEOPLE)}'s wedding is in ${p(PLACES)} in ${p(MONTHS)}.`,
  (p) => `The receipt for the ${p(THINGS)} is in the blue folder.`,
];

export function distractorFacts(count = 240, seed = 7): string[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const facts = new Set<string>();
  while (facts.size < count)
    facts.add(
      (TEMPLATES[Math.floor(next() * TEMPLATES.length)] as (typeof TEMPLATES)[number])(pick),
    );
  return [...facts];
}
