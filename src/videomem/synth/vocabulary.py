"""The words and looks of the scripted benchmarks: rooms, colours, people, actions, things,
and what the sound track says; every script, question and paraphrase draws on these lists."""


LOCATIONS: dict[str, tuple[int, int, int]] = {
    # Mid-tone backgrounds, so the near-white text panel stands out on every one.
    "KITCHEN": (196, 132, 84),
    "GARDEN": (84, 150, 84),
    "GARAGE": (120, 120, 130),
    "OFFICE": (76, 108, 170),
    "LIVING ROOM": (150, 92, 150),
    "HALLWAY": (170, 150, 70),
}
COLOURS: dict[str, tuple[int, int, int]] = {
    "RED": (215, 35, 35),
    "BLUE": (35, 75, 215),
    "GREEN": (30, 165, 60),
    "YELLOW": (240, 205, 30),
    "ORANGE": (245, 135, 25),
    "PURPLE": (130, 50, 185),
}
COUNT_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
"""Counts as the second question writer gives them: in words."""
PEOPLE = ("ALICE", "BOB", "CAROL", "DAVID", "EMMA", "FRANK")
VERBS = (  # (third person, base form)
    ("OPENS", "open"),
    ("PAINTS", "paint"),
    ("CARRIES", "carry"),
    ("WASHES", "wash"),
    ("LOCKS", "lock"),
    ("REPAIRS", "repair"),
)
THINGS = ("DOOR", "BOX", "GATE", "CHAIR", "BICYCLE", "SUITCASE", "LAMP", "CUPBOARD", "TABLE", "WINDOW")
NOTE_LABELS = ("SAFE CODE", "LOCKER CODE", "BUS NUMBER", "ROOM NUMBER", "TICKET NUMBER")
OBJECTS = ("KEYS", "WALLET", "PHONE", "UMBRELLA")
SPOTS = (
    "ON THE KITCHEN TABLE",
    "IN THE BLUE DRAWER",
    "ON THE GARAGE SHELF",
    "IN THE RED BASKET",
    "UNDER THE SOFA",
    "BY THE FRONT DOOR",
    "IN THE COAT POCKET",
)
ACTIVITIES = (  # (on-screen "-ing" phrase, question phrase)
    ("PLAYING CHESS", "play chess"),
    ("PAINTING THE FENCE", "paint the fence"),
    ("BAKING A CAKE", "bake a cake"),
    ("FIXING THE BIKE", "fix the bike"),
    ("PLANTING TOMATOES", "plant tomatoes"),
    ("BUILDING A SHELF", "build a shelf"),
    ("PLAYING CARDS", "play cards"),
)
IDLE_ACTIVITIES = ("IS ON THE PHONE", "READS A BOOK", "DRINKS TEA", "TAKES A NAP", "LOOKS OUT OF THE WINDOW")
"""Distractors of the single video: a person of the script doing nothing that is asked about."""
EGOLIFE_DISTRACTORS = (  # (text, location): they name the keys, lunch, the list, the plants
    ("LOOKING FOR THE KEYS", "HALLWAY"),
    ("WASHING UP AFTER LUNCH", "KITCHEN"),
    ("READING THE NEWSPAPER", "LIVING ROOM"),
    ("WATERING THE PLANTS", "GARDEN"),
    ("WRITING A LETTER", "OFFICE"),
    ("LOSING THE SHOPPING LIST", "GARAGE"),
)
VERB_SYNONYMS = {  # base form → (base, third person) of a synonym
    "open": ("pull open", "pulls open"),
    "paint": ("colour", "colours"),
    "carry": ("haul", "hauls"),
    "wash": ("clean", "cleans"),
    "lock": ("secure", "secures"),
    "repair": ("fix", "fixes"),
}
THING_SYNONYMS = {
    "door": "doorway", "box": "crate", "gate": "garden gate", "chair": "seat", "bicycle": "bike",
    "suitcase": "travel bag", "lamp": "light", "cupboard": "cabinet", "table": "dining table", "window": "window pane",
}
FOODS = ("NOODLES", "PIZZA", "SOUP", "SALAD", "DUMPLINGS", "CURRY", "SANDWICHES")
GROCERIES = (
    "MILK", "EGGS", "BREAD", "APPLES", "RICE", "BUTTER", "CHEESE",
    "ONIONS", "TEA", "PASTA", "HONEY", "CARROTS", "YOGURT", "LEMONS",
)
# The spoken track (--speech): no word of these is ever on screen.
SPOKEN_ITEMS = ("PASSPORT", "CHARGER", "SCARF", "RAINCOAT")
SPOKEN_SPOTS = ("BEHIND THE PIANO", "ON THE BOOKSHELF", "UNDER THE BED", "NEXT TO THE FRIDGE", "IN THE TOOLBOX", "BY THE FIREPLACE")
SPOKEN_ROLES = ("PLUMBER", "NEW NEIGHBOUR", "DENTIST", "TAXI DRIVER", "SWIMMING COACH")
SPOKEN_NAMES = ("OLIVER", "GRACE", "HENRY", "MAYA", "SAMUEL", "NORA", "VICTOR", "IRIS")
SPOKEN_LABELS = ("WIFI PASSWORD", "ALARM CODE", "PARKING SPACE NUMBER", "FLIGHT NUMBER")
