"""The word lists of the ``edits`` rules (:mod:`faithwatch.alignment.edits`): negations, verbs that negate, the
auxiliaries of a negation, negating prefixes, pairs of opposites, closed groups of contrast words, universal words
and the scale words of numbers. Words are compared by stem (:func:`faithwatch.text.stem`), as the tokens are; a
change here changes the features, so bump ``edits.EDITS_VERSION`` with it."""

from __future__ import annotations

import gzip
from functools import cache
from importlib.resources import files

from faithwatch.text import MONTHS, WEEKDAYS, stem

#: negation words (compared unstemmed: tokens keep them as written)
NEGATIONS = frozenset({"not", "no", "never", "without", "none", "nor", "neither", "nobody", "nothing", "cannot"})
#: negation words that lead a sentence as its determiner or subject ("None of the", "Nobody was"): one of them
#: replaced by words with no negation flips the statement where it leads it (v70)
LEADING_NEGATIONS = frozenset({"no", "none", "nobody", "nothing", "neither", "never"})
#: verbs that negate what follows, as written (lower-cased): they count as negations (v36), so "failed to score"
#: restates "did not score" and "reached" for "failed to reach" is a flip; not "lack" or "stops" (mostly nouns)
NEGATING_VERBS = frozenset({"fail", "fails", "failed", "failing", "lacks", "lacked", "lacking", "refuse", "refuses",
                            "refused", "refusing", "cease", "ceases", "ceased", "ceasing", "stop", "stopped",
                            "stopping"})
#: the auxiliaries of a negation ("does not like"), left out where a negating prefix may replace it (v34)
NEGATED_AUXILIARIES = frozenset(stem(w) for w in ("do", "does", "did"))
#: prefixes that negate the word they lead (by stem: "unlikely" is "likely" negated); not "mis" ("misconduct")
NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non")
#: pairs of opposite words, stemmed as tokens are: swapping one for the other flips the statement like a negation
#: (until v11 they were compared unstemmed, so rise/fall, rose/fell, more/less, before/after, above/below, gain/loss
#: and success/failure never matched)
OPPOSITE_PAIRS = ("rise fall", "rose fell", "risen fallen", "increase decrease", "more less", "most least",
                  "higher lower", "highest lowest", "larger smaller", "largest smallest", "before after", "above below",
                  "gain loss", "win lose", "won lost", "open close", "first last", "accept reject", "allow forbid",
                  "include exclude", "success failure", "north south", "east west", "earlier later", "maximum minimum",
                  "strong weak", "young old", "major minor", "up down", "grew shrank", "support oppose",
                  # v72: size, doubling, certainty
                  "large small", "big small", "huge tiny", "double halve", "may will", "might will", "could will")


_VOWELS = frozenset("aeiou")


def forms(word: str, doubled: bool = True) -> frozenset[str]:
    """The stems that ``word`` stands for: its own, and (``doubled``, v35) those of its forms with a final
    consonant doubled before "ed" and "ing" when it ends in consonant, vowel, consonant, not s, w, x or y (ban:
    banned, banning; win: winning), which the stemmer does not reduce to it ("princes" is no stem: "princesses")."""
    out = {stem(word)}
    if (doubled and len(word) >= 3 and word.isalpha() and word[-1] not in _VOWELS | {"s", "w", "x", "y"}
            and word[-2] in _VOWELS and word[-3] not in _VOWELS):
        out |= {stem(word + word[-1] + "ed"), stem(word + word[-1] + "ing")}
    return frozenset(out)


def classes(group: str, doubled: bool = True) -> tuple[frozenset[str], ...]:
    """A contrast group's classes of stems (with :func:`forms`): separated by "/" (words of a class name the same
    thing: "feet ft"), or, without "/", one word each."""
    return tuple(frozenset().union(*(forms(w, doubled) for w in part.split()))
                 for part in (group.split("/") if "/" in group else group.split()))


#: closed groups of contrast words, as classes of synonyms: a word swapped for one of another class of its group
#: flips the statement too (edits v4; units, currencies and comparatives since v5; antonyms since v9; ordinals v10;
#: verbs of change by direction v12; stance v14; v21 (first measured as v20): degree, hiring, change of
#: quality, strength, adding, survival, majority, rank, the parties of a contract, home/away; v22: frequency,
#: since/until, position, arrest, joining, acceptance, host/guest, teacher/student, landlord/tenant, winner/loser,
#: launch/cancel; v23: beat/lost, beat/missed; v26 (first measured as v24): effects, creation, stance, life
#: events, prices, titles; v31: severity, completeness, age, the parties of a case, stance, accounts, diagnoses,
#: doctor/patient, offensive/defensive; v32: permission/duty, bounds; v35: doubled consonants, forbidden; v42:
#: months, weekdays; v73: stance, price, departure, germs; v74: market verbs of change, once/twice; v75:
#: rulings, ratings and rates; v76: casualties, roles in a crime, the subjects of a study; v104: evening and night one
#: class; later ones: below)
CONTRAST_GROUPS = (
    "am pm", "weekday weekend", "morning / afternoon / evening night", "day night",
    "daily / weekly / monthly / annual annually yearly", "today tomorrow yesterday", "high low", "upper lower",
    "front back", "top bottom", "left right", "inside outside", "indoor outdoor", "entrance exit", "arrive depart",
    "start end", "begin end", "import export", "buy sell", "bought sold", "public private",
    "internal external", "input output", "inbound outbound", "free paid", "male female", "men women",
    "man woman", "boy girl", "husband wife", "mother father", "son daughter", "brother sister", "best worst",
    "better worse", "good bad", "positive negative", "true false", "hot cold", "fast slow", "cheap expensive",
    "long short", "new old", "same different", "many few", "full part", "victory defeat", "profit loss",
    "surplus deficit",
    "metre metres meter meters m / kilometre kilometres kilometer kilometers km / mile miles / foot feet ft / yard "
    "yards / inch inches / centimetre centimetres centimeter centimeters cm / millimetre millimetres millimeter "
    "millimeters mm",
    "tonne tonnes ton tons / kilogram kilograms kilo kilos kg / gram grams / pound pounds lb lbs / ounce ounces oz",
    "euro euros / dollar dollars / pound pounds sterling / yen / franc francs / yuan / rupee rupees / peso pesos",
    "second seconds sec secs / minute minutes min mins / hour hours hr hrs / day days / week weeks wk wks / month "
    "months / year years yr yrs / decade "
    "decades / century centuries",
    "celsius c / fahrenheit f", "litre litres liter liters / gallon gallons", "acre acres / hectare hectares",
    "tallest shortest", "taller shorter", "biggest smallest", "bigger smaller", "longest shortest", "longer shorter",
    "oldest / youngest newest", "older / younger newer", "richest poorest", "richer poorer", "heaviest lightest",
    "heavier lighter", "fastest slowest", "faster slower", "widest narrowest", "wider narrower",
    "hottest warmest / coldest", "hotter warmer / colder", "earliest latest", "more fewer", "over under",
    "guilty innocent", "mandatory compulsory required obligatory / optional voluntary", "temporary permanent",
    "alive living / dead deceased", "safe / dangerous hazardous", "easy difficult", "approve approved / reject "
    "rejected", "pass passed / fail failed", "deciduous evergreen", "shallow deep", "quiet silent / noisy loud",
    "rich wealthy / poor", "present absent", "wet dry", "empty full", "thick thin", "wide narrow",
    "ancient modern", "past future", "former current", "domestic / international foreign", "urban rural",
    "northern southern", "eastern western", "spring / summer / autumn fall / winter",
    " / ".join(MONTHS), " / ".join(WEEKDAYS), "primary secondary",
    "inner outer", "early late", "frequent rare", "common rare", "asleep awake", "friend ally / enemy",
    "peace war", "love hate", "allow permit / forbid forbidden forbade prohibit ban",
    "first second third fourth fifth sixth seventh eighth ninth tenth",
    "increase rise rose risen raise grow grew grown climb boost gain surge surged soar soared jump jumped leap leapt "
    "leaped rebound rebounded rally rallied / decrease reduce cut cutting fall fell fallen drop dropped dropping "
    "decline shrink shrank shrunk lower plunge plunged plummet plummeted slump slumped tumble tumbled slide slid sink "
    "sank sunk dip dipped",  # market verbs since v74
    "for / against", "confirm confirmed / deny denied", "admit admitted / deny denied", "believe believed / doubt "
    "doubted", "praise praised / criticise criticised criticize criticized", "acquit acquitted / convict convicted",
    "mainly mostly largely primarily chiefly / partly partially",
    "hire hired hires hiring / fire fired fires firing dismiss dismissed sack sacked",
    "improve improved improves improving / worsen worsened worsens worsening deteriorate deteriorated",
    "strengthen strengthened strengthens / weaken weakened weakens", "add added adds adding / remove removed removes "
    "removing", "survive survived survives / die died dies", "majority / minority", "senior / junior",
    "employer employers / employee employees", "buyer buyers / seller sellers",
    "lend lends lent lending lender lenders / borrow borrows borrowed borrowing borrower borrowers", "home / away",
    "often usually / rarely seldom", "since / until", "ahead / behind",
    "lead leads leading led / trail trails trailing trailed", "arrest arrests arrested / release releases released",
    "join joins joined / quit quits resign resigns resigned",
    "accept accepts accepted / decline declines declined refuse refuses refused",
    "host hosts / guest guests visitor visitors", "teacher teachers / student students pupil pupils",
    "landlord landlords owner owners / tenant tenants renter renters", "winner winners / loser losers",
    "launch launches launched / cancel cancels cancelled canceled scrap scrapped",
    "beat beats beating / lost lose loses losing", "beat beats beating / miss missed misses",
    "cause causes caused causing / prevent prevents prevented preventing",
    "help helps helped helping / hurt hurts harm harms harmed",
    "create creates created creating / destroy destroys destroyed eliminate eliminates eliminated",
    "attack attacks attacked / defend defends defended", "born birth births / died death deaths",
    "married marry marries / divorced divorce divorces", "inflation / deflation", "king kings / queen queens",
    "prince princes / princess princesses", "uncle uncles / aunt aunts", "nephew nephews / niece nieces",
    "grandfather grandfathers / grandmother grandmothers",
    "mild / moderate / severe serious", "partial partially / complete completely total totally",
    "adult adults / child children kid kids", "plaintiff plaintiffs / defendant defendants",
    "prosecution prosecutor prosecutors / defence defense", "supporter supporters / critic critics opponent opponents",
    "credit / debit", "asset assets / liability liabilities", "benign / malignant", "acute / chronic",
    "doctor doctors physician physicians / patient patients", "offensive / defensive",
    "may might can could / must shall", "most maximum / least minimum",
    # v73
    "encouraging promising / disappointing", "optimistic / pessimistic",
    "welcome welcomed welcomes / condemn condemned condemns criticise criticised criticize criticized",
    "cheaper / dearer pricier", "cheapest / dearest priciest",
    "sack sacked fire fired dismiss dismissed / resign resigned resigns quit quits",
    "virus viruses viral / bacteria bacterium bacterial / fungus fungi fungal",
    "once / twice / thrice",  # v74
    # v75: rulings, ratings and rates
    "uphold upheld upholds / overturn overturned overturns quash quashed",
    "grant granted grants / deny denied denies refuse refused", "enact enacted / repeal repealed",
    "upgrade upgraded upgrades / downgrade downgraded downgrades", "bullish / bearish",
    "outperform outperformed outperforms / underperform underperformed underperforms", "superior / inferior",
    "overestimate overestimated / underestimate underestimated", "hike hikes hiked / cut cuts",
    # v76: casualties, roles in a crime, the subjects of a study
    "kill killed kills / injure injured injures wound wounded hurt",
    "suspect suspects attacker attackers gunman / victim victims / witness witnesses",
    "human humans / mouse mice / rat rats",
    # v77: parties, materials, rooms, fuels, vehicles, court surfaces, football positions, diseases
    "democrat democrats democratic / republican republicans", "labour / conservative conservatives tory tories",
    "steel / concrete / wood wooden timber / brick bricks / stone / glass / plastic",
    "kitchen kitchens / bedroom bedrooms / bathroom bathrooms / garage garages / basement basements cellar cellars"
    " / attic attics",
    "electric / diesel / petrol gasoline / hydrogen",
    "bus buses / tram trams / train trains / lorry lorries truck trucks / van vans / car cars / bicycle bicycles"
    " / motorcycle motorcycles motorbike motorbikes / boat boats ship ships ferry ferries vessel vessels"
    " / helicopter helicopters / plane planes aircraft jet jets airliner",
    "grass / clay", "striker strikers / goalkeeper goalkeepers / defender defenders / midfielder midfielders",
    "cancer cancers / diabetes / dementia / asthma / malaria / measles / tuberculosis",
    # v78: upstream/downstream, meals, diets, the poles, health workers, payment, contact, written works, trades
    "upstream / downstream", "breakfast breakfasts / lunch lunches / dinner dinners supper suppers",
    "vegan vegans / vegetarian vegetarians", "arctic / antarctic",
    "nurse nurses / surgeon surgeons / paramedic paramedics / dentist dentists",
    "cash / card cards / cheque cheques / coin coins", "letter letters / phone phones telephone / email emails",
    "song songs / poem poems / novel novels / memoir memoirs / essay essays",
    "farmer farmers / fisherman fishermen / miner miners",
    # v79: colours, metals, instruments, sports, livestock, crops, weather, organs, gases, power sources, faiths,
    # waters, places of worship, limbs, media, doses, and eight pairs
    "red / blue / green / yellow / black / white / orange / purple / pink / brown / grey gray",
    "gold / silver / bronze / copper / iron / zinc / tin / aluminium aluminum / platinum / nickel",
    "piano pianos / violin violins / guitar guitars / cello cellos / drum drums / flute flutes / trumpet trumpets"
    " / saxophone saxophones / harp harps / clarinet clarinets",
    "football soccer / rugby / cricket / tennis / golf / basketball / baseball / hockey / boxing",
    "sheep / pig pigs / cow cows cattle / goat goats / horse horses / chicken chickens hen hens",
    "wheat / rice / maize / barley / oats / soya soy soybeans", "rain rainfall / snow snowfall / fog / hail / sleet",
    "kidney kidneys / liver livers / lung lungs / heart hearts / pancreas",
    "oxygen / nitrogen / methane / helium / carbon / chlorine",
    "solar / wind / nuclear / coal / hydroelectric hydropower / geothermal",
    "catholic catholics / protestant protestants / muslim muslims islamic / jewish jew jews / hindu hindus / sikh"
    " sikhs / buddhist buddhists", "sunni sunnis / shia shiite shiites",
    "lake lakes / river rivers / canal canals / sea seas ocean oceans",
    "church churches / mosque mosques / temple temples / synagogue synagogues",
    "arm arms / leg legs / knee knees / ankle ankles / wrist wrists / shoulder shoulders / elbow elbows / hip hips",
    "radio / television tv / newspaper newspapers / podcast podcasts",
    "tablet tablets pill pills capsule capsules / injection injections jab jabs / cream creams ointment / inhaler"
    " inhalers", "freshwater / saltwater seawater", "wild / captive captivity", "retail / wholesale",
    "civilian civilians / soldier soldiers troops", "shares stocks equities / bonds", "army armies / navy navies naval",
    "bridge bridges / tunnel tunnels",
    # v80: disasters, cancer treatments, times of day, directions, kinds of matter and of work, formats, weights,
    # strokes, medicines
    "earthquake earthquakes quake quakes / hurricane hurricanes cyclone cyclones typhoon typhoons / tornado tornadoes"
    " / flood floods flooding / drought droughts / wildfire wildfires bushfire bushfires / tsunami tsunamis"
    " / avalanche avalanches / landslide landslides", "chemotherapy chemo / radiotherapy / surgery / immunotherapy",
    "dawn sunrise daybreak / dusk sunset nightfall", "noon midday / midnight", "upstairs / downstairs",
    "uphill / downhill", "coastal / inland", "island islands / mainland", "software / hardware", "manual / automatic",
    "vertical vertically / horizontal horizontally", "clockwise / anticlockwise counterclockwise",
    "acidic / alkaline", "singles / doubles", "hardback hardbacks hardcover / paperback paperbacks",
    "heavyweight / cruiserweight / middleweight / welterweight / lightweight / featherweight / bantamweight"
    " / flyweight", "freestyle / backstroke / breaststroke / butterfly",
    "vaccine vaccines / antibiotic antibiotics / antiviral antivirals / painkiller painkillers",
    "solid solids / liquid liquids", "salaried / freelance",
    # v82 (registered as v81): genres, drinks, meats, ranks, crimes, family lines, animal classes and diets,
    # fabrics, directions of travel, kinds of state, and pairs
    "comedy comedies / drama dramas / thriller thrillers / documentary documentaries / horror",
    "sequel sequels / prequel prequels", "tea teas / coffee coffees / beer beers / wine wines / whisky whiskey"
    " / vodka / gin / rum", "beef / pork / lamb / mutton / veal / venison", "wired / wireless",
    "elect elected elects / appoint appointed appoints",
    "corporal corporals / sergeant sergeants / lieutenant lieutenants / colonel colonels",
    "felony felonies / misdemeanour misdemeanours misdemeanor misdemeanors", "civil / criminal",
    "murder murders murdered / manslaughter", "robbery robberies / burglary burglaries / theft thefts",
    "eldest / youngest", "paternal / maternal", "paternity / maternity", "masculine / feminine",
    "mammal mammals / reptile reptiles / bird birds / fish fishes / insect insects / amphibian amphibians",
    "herbivore herbivores herbivorous / carnivore carnivores carnivorous / omnivore omnivores omnivorous",
    "predator predators / prey", "nocturnal / diurnal",
    "cotton / wool woollen / silk / leather / linen / polyester / nylon", "analogue analog / digital",
    "offshore / onshore", "inpatient inpatients / outpatient outpatients",
    "northbound / southbound / eastbound / westbound", "lunar / solar",
    "sunny / cloudy / rainy / snowy / windy / foggy", "liberal liberals / conservative conservatives",
    "veteran veterans / rookie rookies", "monarchy monarchies / republic republics",
    "democracy democracies / dictatorship dictatorships", "gross / net",
    # v83: grandchildren, acoustic/electric, organic/synthetic, renewable/fossil
    "grandson grandsons / granddaughter granddaughters", "acoustic / electric", "organic / synthetic",
    "renewable renewables / fossil",
    # v90: stages of a process, fields of study
    "propose proposed proposes proposal proposals / approve approved approves approval adopt adopted",
    "arrest arrested / charge charged / convict convicted conviction / sentence sentenced / acquit acquitted",
    "nominate nominated nominates nomination nominations shortlist shortlisted / win won wins",
    "suspected / confirmed",
    "law / medicine / engineering / economics / physics / chemistry / biology / mathematics maths / philosophy"
    " / architecture / nursing",
    # v91: outcomes, sources of a claim, bounds
    "sign signed signs / veto vetoed vetoes",
    "postpone postponed postpones delay delayed delays / cancel cancels cancelled canceled",
    "police / witness witnesses", "nearly almost / more", "extend extended extends / shorten shortened shortens",
    "unanimous unanimously / narrow narrowly", "online / offline",
    # v92: directions of a transfer, a time, a weight or a kin
    "send sent sends sending / receive received receives receiving",
    "deposit deposits deposited / withdraw withdraws withdrew withdrawn",
    "previous last / next", "heavy heavily / light lightly", "hard / soft", "plus / minus",
    "upward upwards / downward downwards", "forward forwards / backward backwards",
    "gain gained gains / lose lost loses", "ally allies / rival rivals", "local / national / international global",
    "parent parents / child children kid kids", "mother mothers / daughter daughters", "father fathers / son sons",
    "rent rents rented renting lease leases leased / buy buys bought buying purchase purchased purchases",
    # v93: policy, economy and manner
    "tighten tightened tightens tightening / relax relaxed relaxes relaxing loosen loosened loosens ease eased eases"
    " easing", "impose imposed imposes / lift lifted lifts",
    "save saved saves saving savings / spend spent spends spending", "expansion / contraction",
    "recovery / recession slump", "peak peaks / trough troughs", "overweight / underweight",
    "revenue revenues sales turnover / profit profits", "build built builds / demolish demolished demolishes",
    "remember remembered remembers / forget forgot forgotten forgets",
    "teach taught teaches / learn learned learnt learns",
    "reward rewarded rewards / punish punished punishes penalise penalised penalize penalized",
    "simple simpler / complex complicated", "clean cleaner / dirty dirtier", "happy / sad",
    "correct correctly / wrong wrongly", "warm / cool", "dark / light bright",
    "quick quickly rapid rapidly / slow slowly gradual gradually",
    "accelerate accelerated accelerates / slow slowed slows decelerate decelerated",
    "advance advanced advances / retreat retreated retreats", "strict stricter / lenient",
    # v96: travel, markets, food and play (v95 with cheap/expensive too: not kept)
    "arrival arrivals / departure departures", "supply supplies supplied / demand demands demanded",
    "fresh / frozen", "raw / cooked", "healthy / sick ill", "inflow inflows / outflow outflows",
    "overvalued / undervalued", "hawkish / dovish", "ascend ascended ascends / descend descended descends",
    "enter entered enters / exit exited exits", "push pushed pushes / pull pulled pulls",
    "offence offense / defence defense", "attacker attackers / defender defenders", "active / passive",
    "real genuine authentic / fake counterfeit forged", "native / foreign",
    "exporter exporters / importer importers", "wedding weddings / funeral funerals", "hero heroes / villain villains",
    "optimism / pessimism", "expand expanded expands / shrink shrank shrunk shrinks", "open opened opens / shut shuts",
    "sink sank sunk sinks / float floated floats", "freeze froze freezes / thaw thawed thaws melt melted melts",
    "bright brighter / dim dimmer", "smooth / rough", "tight tighter / loose looser", "abundant plentiful / scarce",
    "surplus glut / shortage shortages scarcity", "boom booming / bust", "overbought / oversold",
    "amateur amateurs / professional professionals", "beginner beginners novice novices / expert experts",
    "interior / exterior",
    # v97: offices, finance, places and roles
    "incumbent incumbents / challenger challengers",
    "upload uploaded uploads / download downloaded downloads",
    "undergraduate undergraduates / postgraduate postgraduates",
    "acid acidic / alkaline", "tropical / temperate / arctic polar", "urban / suburban / rural",
    "creditor creditors / debtor debtors", "mayor mayors / governor governors", "equity / debt",
    "dividend dividends / buyback buybacks", "factory factories / warehouse warehouses", "mobile / desktop",
    "driver drivers pilot pilots / passenger passengers",
    "pedestrian pedestrians / cyclist cyclists / motorist motorists",
    "bail / remand remanded", "cat cats / dog dogs", "wolf wolves / fox foxes",
    "acquire acquired acquires / divest divested divests",
    # v98: tastes, health, leagues, budgets and traits
    "sweet sweeter / sour bitter", "physical physically / mental mentally",
    "promote promoted promotion / relegate relegated relegation demote demoted", "income / expenditure spending",
    "upbeat / gloomy downbeat", "peaceful peacefully / violent violently", "adult adults / juvenile juveniles",
    "identical / fraternal", "biological / adoptive", "landlocked / coastal", "generous / stingy", "polite / rude",
    "brave / cowardly", "wise / foolish", "inhale inhaled / exhale exhaled",
    "invasion invasions / withdrawal withdrawals",
    "encourage encouraged encourages / discourage discouraged discourages",
    "ascent / descent", "upriver / downriver", "highland highlands / lowland lowlands", "calm / stormy", "mild / harsh",
    # v102: roles, property, schedules and care
    "sender senders / recipient recipients", "batsman batsmen / bowler bowlers", "pitcher pitchers / catcher catchers",
    "probation / parole", "residential / commercial / industrial", "freehold / leasehold",
    "quarterly / monthly / annual annually yearly", "ceiling ceilings / floor floors",
    "oral orally verbal verbally / written", "native / invasive", "elective / emergency", "urgent / routine",
    "sacred / secular", "military / civilian civilians", "medieval / ancient / modern",
    "progressive progressives / conservative conservatives", "unanimous unanimously / split", "front / rear",
    # v103: stages, kinds and places
    "generic / branded", "dominant / recessive", "edible / poisonous", "freshman freshmen / sophomore sophomores",
    "preliminary / final", "interim / permanent", "debut / farewell", "premiere / finale", "uptown / downtown",
    "waxing / waning", "humid / arid", "fertile / barren", "dorsal / ventral", "systolic / diastolic",
    "lethal deadly / harmless", "nominee nominees / winner winners",
    # v108: multiples
    "halve halved halving / double doubled doubling twofold / triple tripled tripling treble trebled threefold / "
    "quadruple quadrupled quadrupling fourfold",
    # v109: degrees and care roles
    "bachelor bachelors / master masters / doctorate doctorates doctoral",
    "nurse nurses / doctor doctors physician physicians",
    # v110: sport and court roles, hourly
    "coach coaches / player players", "judge judges / jury juries juror jurors", "hourly / daily / weekly",
    # v113: quantities, rounds of a tournament, roles in a business
    "most / few", "quarterfinal quarterfinals / semifinal semifinals / final finals", "manager managers / owner owners",
    # v114: care, degree of a change, rulings, genres, tenure
    "admit admits admitted admission / discharge discharges discharged",
    "sharply steeply dramatically / slightly marginally modestly",
    "sign signs signed ratify ratified / reject rejects rejected",
    "uphold upholds upheld / reject rejects rejected dismiss dismisses dismissed",
    "comedy comedies / tragedy tragedies", "own owns owned / rent rents rented lease leases leased",
    # v115: secrecy, harm, ownership, contests, water, frequency, authorship, votes (vegetarian/vegan: v78)
    "secret secretly / public publicly", "damage damaged damages / destroy destroyed destroys", "minor / serious",
    "privatise privatised privatize privatized privatisation privatization / nationalise nationalised nationalize "
    "nationalized nationalisation nationalization", "concede concedes conceded / win wins won",
    "salt salty saltwater / fresh freshwater", "annual annually yearly / biennial biennially",
    "write writes wrote written / translate translates translated",
    "unanimous unanimously / majority",
    # v116: odds, trade, survival, extent, treaties, taxes, takeovers, volcanoes, headings, growth, discipline, closure
    "favourite favourites favorite favorites / underdog underdogs", "supplier suppliers / customer customers",
    "endangered / extinct", "fully completely entirely / partially partly", "bilateral / multilateral",
    "abolish abolished abolishes abolition / introduce introduced introduces introduction", "hostile / friendly",
    "dormant / active", "eastward eastwards / westward westwards / northward northwards / southward southwards",
    "expand expanded expands expansion / contract contracted contracts contraction",
    "suspend suspended suspends suspension / reinstate reinstated reinstates",
    "close closed closes closure / reopen reopened reopens reopening",
    # v117: politics, food, flight, justice, deals, offices, art, roads, stars, rules, buildings, societies
    "moderate moderates / radical radicals", "wild / farmed", "landed / crashed",
    "pardon pardoned pardons / execute executed executes execution", "acquire acquired acquires / sell sold sells",
    "appoint appointed appoints / sack sacked dismiss dismissed oust ousted",
    "original originals genuine authentic / replica replicas forgery forgeries fake fakes counterfeit",
    "widen widened widens widening / narrow narrowed narrows narrowing",
    "dwarf dwarfs / giant giants supergiant supergiants", "approve approved approves approval / ban banned bans",
    "restore restored restores restoration / demolish demolished demolishes demolition",
    "founded founding / dissolved disbanded",
    # v118: the economy, contests, care, gems, children, leases, crowds, recalls, records, storage, fees, shapes
    "boom booming / recession recessions slump", "qualify qualified qualifies / eliminated",
    "recover recovered recovers / relapse relapsed relapses",
    "diamond diamonds / ruby rubies / emerald emeralds / sapphire sapphires",
    "adopt adopted adopts adoption / foster fostered fosters",
    "renew renewed renews renewal / expire expired expires expiry lapse lapsed",
    "cheer cheered cheers / boo booed boos jeer jeered jeers", "launch launched launches / recall recalled recalls",
    "handwritten / typed typewritten", "frozen / thawed", "resident residents / visitor visitors tourist tourists",
    "circular / oval / rectangular / triangular",
    # v119: markets, appeals, gifts, trials, saves, trade, voices, forms, races, cells, stone, railways
    "bull bullish / bear bearish", "uphold upheld upholds / reverse reversed reverses",
    "donate donated donates donation donations bequeath bequeathed / lend lends lent loaned",
    "placebo placebos / vaccine vaccines drug drugs", "save saved saves / concede conceded concedes",
    "wholesaler wholesalers / retailer retailers", "soprano sopranos / alto altos / tenor tenors / baritone baritones",
    "prose / verse", "sprint sprints sprinter sprinters / marathon marathons",
    "haploid / diploid / triploid / polyploid", "marble / granite / limestone / sandstone / bronze",
    "overground / underground",
    # v120: currencies, solvency, votes, crops, ice, custody, birds, species, projects, peoples, forests, thefts
    "appreciate appreciated appreciates appreciation / depreciate depreciated depreciates depreciation",
    "solvent / bankrupt bankruptcy insolvent", "endorse endorsed endorses endorsement / veto vetoed vetoes",
    "sow sowed sown sows / harvest harvested harvests reap reaped",
    "thicken thickened thickens thickening / thin thinned thins thinning",
    "escape escaped escapes / capture captured captures recapture recaptured", "migratory migrant migrants / resident",
    "eradicate eradicated eradicates eradication / reintroduce reintroduced reintroduces reintroduction",
    "abandon abandoned abandons / complete completed completes completion", "nomadic nomad nomads / sedentary settled",
    "planted planting / felled felling", "steal stole stolen steals theft / recover recovered recovers",
    # v121: votes, taxes, reactions, microbes, drugs, rocks, regimes, constitutions, diseases, contracts, snakes
    "favour favor / against", "progressive / regressive", "exothermic / endothermic", "aerobic / anaerobic",
    "stimulant stimulants / sedative sedatives depressant depressants", "agonist agonists / antagonist antagonists",
    "igneous / sedimentary / metamorphic", "democratic democracy / authoritarian dictatorship autocratic",
    "parliamentary / presidential", "hereditary inherited congenital / acquired", "valid / void",
    "toxic poisonous venomous / harmless",
    # v123: routes, orbits, optics, rock, prices, studies, trials, shares, plants, thrones, currencies
    "intravenous intravenously / oral orally / topical topically", "prograde / retrograde", "convex / concave",
    "refractor refractors / reflector reflectors", "porous permeable / impermeable", "inclusive / exclusive",
    "retrospective retrospectively / prospective prospectively", "randomised randomized / observational",
    "premium / discount", "perennial perennials / annual annuals / biennial biennials",
    "abdicated abdicates abdicate / crowned enthroned", "devalued devalue devalues / revalued revalue revalues",
    # v124: health, membership, grammar, release, monuments, appeals, paint, animals, debts, number, timber, survival
    "harmful / beneficial", "resigned resign resigns / expelled expel expels",
    "noun nouns / verb verbs / adjective adjectives / adverb adverbs", "parole / bail / probation",
    "erected erect / dismantled dismantle", "grant granted grants / dismiss dismissed dismisses",
    "watercolour watercolours watercolor watercolors / acrylic acrylics / oil oils / pastel pastels / gouache",
    "vertebrate vertebrates / invertebrate invertebrates", "repaid repay repays / forgiven forgive forgives",
    "singular / plural", "hardwood hardwoods / softwood softwoods", "extinct / extant",
    # v125: secrets, systems, food, sentences, drinks, borders, sound, animals, harvests, pay, hotels
    "encrypt encrypted encrypts encryption / decrypt decrypted decrypts decryption", "android / ios",
    "linux / windows / macos", "spicy / mild", "suspended / custodial", "decaffeinated decaf / caffeinated",
    "demilitarised demilitarized / militarised militarized", "acoustically / electrically", "domesticated tame / feral",
    "bumper / meagre meager", "salaried / hourly", "budget / luxury",
    # v126: pictures, seas, herbs, music, thrones, wine, paintings, couples, strokes, land, glass, votes
    "monochrome / colour color colours colors", "calm / rough", "fresh / dried", "tonal / atonal",
    "deposed deposes depose / crowned enthroned", "sweet / dry", "abstract / figurative", "engaged / married",
    "forehand forehands / backhand backhands", "arable / pasture pastures grazing", "laminated / tempered",
    "binding / advisory",
    # v127: cells, vessels, genomes, wounds, styles, columns, houses, roofs, cars, boats, aircraft, markets
    "prokaryotic prokaryote prokaryotes / eukaryotic eukaryote eukaryotes",
    "artery arteries arterial / vein veins venous", "rna / dna", "superficial / deep",
    "gothic / romanesque / baroque / neoclassical / rococo", "doric / ionic / corinthian", "detached / terraced",
    "thatched / tiled", "convertible convertibles / saloon saloons sedan sedans / hatchback hatchbacks",
    "catamaran catamarans / monohull monohulls / trimaran trimarans",
    "biplane biplanes / monoplane monoplanes / triplane triplanes",
    "monopoly monopolies / oligopoly oligopolies / duopoly duopolies",
    # v128: policy, mines, dances, poems, shows, lives, strings, horses, plants, trees, galaxies, fossils
    "expansionary / contractionary", "opencast / underground",
    "waltz waltzes / tango tangos / foxtrot foxtrots / polka polkas", "sonnet sonnets / haiku / limerick limericks",
    "scripted / improvised unscripted", "autobiography autobiographies memoir memoirs / biography biographies",
    "violin violins / viola violas / cello cellos", "stallion stallions colt colts / mare mares filly fillies",
    "monocot monocots monocotyledon monocotyledons / dicot dicots dicotyledon dicotyledons",
    "conifer conifers coniferous / broadleaf broadleaved", "spiral / elliptical",
    "trilobite trilobites / ammonite ammonites",
    # v129: courts, surgery, doses, cooking, shoes, jackets, trainees, junctions, ships, meat
    "magistrate magistrates / jury juries", "surgeon surgeons / anaesthetist anaesthetists anesthetist anesthetists",
    "weekly / fortnightly", "baked / fried / grilled / roasted / boiled / poached / steamed", "leather / suede",
    "waterproof / windproof", "intern interns / apprentice apprentices", "roundabout roundabouts / crossroads",
    "tanker tankers / trawler trawlers", "minced / diced",
    # v130: schools, grids, batteries, bulbs, waste, clouds, eruptions, coasts, terms, wetlands, watches, lighthouses
    "suspended / expelled", "centralised centralized / decentralised decentralized",
    "rechargeable reusable / disposable", "incandescent / fluorescent", "recycled / incinerated",
    "cumulus / cirrus / stratus", "explosive / effusive", "rocky / sandy", "semester semesters / trimester trimesters",
    "marsh marshes / bog bogs", "mechanical / quartz", "manned / automated")
CONTRASTS = tuple(classes(group) for group in CONTRAST_GROUPS)


def opposites(pairs: tuple[str, ...], groups: tuple[tuple[frozenset[str], ...], ...],
              doubled: bool = True) -> frozenset[frozenset[str]]:
    """The stem pairs that flip a statement: each pair of words of ``pairs`` (with :func:`forms`), and every two
    stems of different classes of one contrast group of ``groups``."""
    pair_forms = (tuple(forms(w, doubled) for w in pair.split()) for pair in pairs)
    return frozenset(frozenset((a, b)) for one, other in pair_forms for a in one for b in other) | frozenset(
        frozenset((a, b)) for group in groups for i, one in enumerate(group) for other in group[i + 1:]
        for a in one for b in other if a != b)


#: the two directions of a change (up, down), by stem: the classes of the contrast group of verbs of change and a
#: few more words ("up 8%", "an 8% loss"; "slipped", "eased": v85); a number restated with the other direction flips
#: its source (v84)
_CHANGE = next(group for group in CONTRASTS if stem("increase") in frozenset().union(*group))
DIRECTIONS = (_CHANGE[0] | frozenset().union(*(forms(w) for w in ("up", "higher", "growth", "expand", "expanded"))),
              _CHANGE[1] | frozenset().union(*(forms(w) for w in ("down", "loss", "losses", "lose", "lost",
                                                                   "reduction", "lower", "slip", "slipped", "slipping",
                                                                   "ease", "eased", "easing"))))
#: words between a number and the direction of its change that neither count nor block ("12 per cent higher")
DIRECTION_FILLERS = frozenset(stem(w) for w in ("per", "cent", "percent", "percentage", "point", "points"))


#: contradictories: pairs of words where one says what the other's negation says ("is closed": "is not open"), so
#: a changed negation and a swap of one for the other restate (v37); other opposites are often contraries ("did not
#: increase" is not "cut")
CONTRADICTORIES = opposites(("open close", "accept reject", "include exclude"), tuple(
    next(group for group in CONTRASTS if stem(word) in frozenset().union(*group))  # the contrast group of the word
    for word in ("allow", "accept", "present", "alive", "true", "same", "many", "guilty")))
#: every pair of stems whose swap flips a statement (:data:`OPPOSITE_PAIRS` and :data:`CONTRASTS`)
OPPOSITES = opposites(OPPOSITE_PAIRS, CONTRASTS)
#: the contrast groups of units (lengths, weights, currencies, durations, temperatures, volumes, areas), each found
#: by a word of it: in a paraphrased copy a unit is where a restatement converts or bounds ("more than 100
#: centuries ago" -> "more than 100 years ago"), so a swap inside one of them counts only in a near copy (v28)
UNIT_GROUPS = tuple(frozenset().union(*g) for g in CONTRASTS
                    if frozenset().union(*g) & {stem(w) for w in ("metre", "tonne", "euro", "minute", "celsius",
                                                                  "litre", "acre")})
#: words that widen a statement to all (by stem); replacing source words with one flips it like a negation.
#: Not "all" or "every": "all 62 items", "all applications" restate a source's count or set as often as they widen it
UNIVERSALS = frozenset(stem(w) for w in ("everyone", "everybody", "everything", "everywhere", "always", "anyone",
                                         "anybody", "anything"))
#: a source clause holding one of these already speaks of all, so a universal word inserted into its copy restates it
SCOPED = UNIVERSALS | {stem(w) for w in ("all", "every", "each")}
#: partial quantifiers and frequency words (by stem): one of :data:`SCOPED` in their place widens the source (v68)
PARTIAL = frozenset(stem(w) for w in ("some", "most", "many", "several", "few", "certain", "only", "majority",
                                      "usually", "often", "sometimes", "occasionally", "mostly", "generally",
                                      "typically", "frequently"))
#: scale words of a number: one swapped for another ("6.3 million" -> "6.3 billion") is a flip (v12)
SCALE_WORDS = frozenset({"hundred", "thousand", "million", "billion"})
#: words that join the two sides of a relation both ways round: an exchange of the sides across one of these, or
#: across a coordination ("Italy, Germany and France"), reorders the statement without reversing it (v18)
SYMMETRIC = frozenset(stem(w) for w in (
    "and", "or", "nor", "with", "versus", "vs", "v", "against", "between", "meet", "meets", "met", "meeting", "play",
    "plays", "played", "playing", "face", "faces", "faced", "facing", "draw", "draws", "drew", "drawn", "tie", "ties",
    "tied", "marry", "marries", "married", "merge", "merges", "merged", "border", "borders", "bordered"))
#: prepositions: two phrases that each follow the same one ("in Vienna in 1860") are read in either order, so
#: their exchange is no reversal (v25)
PREPOSITIONS = frozenset(stem(w) for w in (
    "in", "on", "at", "by", "for", "with", "from", "to", "of", "into", "during", "after", "before", "since", "until",
    "over", "under", "near", "through", "across", "among", "within", "without", "about"))


@cache
def _lowercase() -> tuple[frozenset[str], frozenset[str]]:
    """The words English writes in lower case (built by ``training/lowercase_words.py``) and their stems."""
    data = files("faithwatch.data").joinpath("lowercase_words.txt.gz").read_bytes()
    words = frozenset(gzip.decompress(data).decode("utf-8").split())
    return words, frozenset(stem(w) for w in words)


def lowercase_word(low: str) -> bool:
    """Whether English writes ``low`` (lower-cased) in lower case: it or its stem is that of a word of the list; a
    capitalised content word that is not is read as a name (v89)."""
    words, stems = _lowercase()
    return low in words or stem(low) in stems
