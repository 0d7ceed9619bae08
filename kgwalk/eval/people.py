"""The people development set: a KG of families (spouses, parents and children) with real place
names, and nested questions over it ("what is the nationality of the spouse of the father of X").

synth's people have a birthplace and a citizenship but no kin, and its questions nest across
domains (the CEO of the company that produced a film). A KG about people nests within one kind:
a person's spouse's parent's birthplace, every step from a person to a person until the last. Its
relation names are bare nouns (`spouse`, `parents`, `nationality`), some relations are each
other's inverse (`parents`, `children`) and one is its own (`spouse`), so a path and its mirror
reach the same people. Names are real first names and surnames, places real countries and cities
(GeoNames, `kgwalk/eval/real_places.py`).

The graph: couples with zero to four children, three generations deep; each person with a
gender, a nationality (mostly the parents'), a place of birth (a city of that country, mostly), a
profession and, for some, an institution they studied at; each city located in its country.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from kgwalk.eval.devsets import ANY, Conjunction, DevSet, Kb, Kind, PathQuestions, Rewordings, Wordings, generate, path, worded
from kgwalk.eval.real_places import cities_by_country

P = PathQuestions

FIRST = {
    "male": (
        "James", "John", "Robert", "Michael", "William", "David", "Richard", "Joseph", "Thomas", "Charles", "Daniel",
        "Matthew", "Anthony", "Mark", "Paul", "Steven", "Andrew", "Kenneth", "Joshua", "Kevin", "Brian", "George", "Edward",
        "Ronald", "Timothy", "Jason", "Jeffrey", "Ryan", "Jacob", "Gary", "Nicholas", "Eric", "Jonathan", "Stephen",
        "Larry", "Justin", "Scott", "Brandon", "Benjamin", "Samuel", "Gregory", "Frank", "Alexander", "Raymond", "Patrick",
        "Jack", "Dennis", "Jerry", "Tyler", "Aaron", "Henry", "Carlos", "Luis", "Pierre", "Hans", "Giovanni", "Kenji",
        "Ivan", "Omar", "Rahul", "Lars"
    ),
    "female": (
        "Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Barbara", "Susan", "Jessica", "Sarah", "Karen", "Nancy",
        "Lisa", "Betty", "Margaret", "Sandra", "Ashley", "Kimberly", "Emily", "Donna", "Michelle", "Dorothy", "Carol",
        "Amanda", "Melissa", "Deborah", "Stephanie", "Rebecca", "Sharon", "Laura", "Cynthia", "Kathleen", "Amy", "Shirley",
        "Angela", "Helen", "Anna", "Brenda", "Pamela", "Nicole", "Emma", "Samantha", "Katherine", "Christine", "Debra",
        "Rachel", "Catherine", "Carolyn", "Janet", "Maria", "Heather", "Sofia", "Ingrid", "Giulia", "Yuki", "Olga",
        "Fatima", "Priya", "Astrid", "Claire", "Lucia"
    ),
}
SURNAMES = (
    "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez", "Hernandez",
    "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson",
    "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen", "King", "Wright",
    "Scott", "Torres", "Nguyen", "Hill", "Flores", "Green", "Adams", "Nelson", "Baker", "Hall", "Rivera", "Campbell",
    "Mitchell", "Carter", "Roberts", "Gomez", "Phillips", "Evans", "Turner", "Diaz", "Parker", "Cruz", "Edwards", "Collins",
    "Reyes", "Stewart", "Morris", "Morales", "Murphy", "Cook", "Rogers", "Gutierrez", "Ortiz", "Morgan", "Cooper",
    "Peterson", "Bailey", "Reed", "Kelly", "Howard", "Ramos", "Kim", "Cox", "Ward", "Richardson", "Watson", "Brooks",
    "Chavez", "Wood", "James", "Bennett", "Gray", "Mendoza", "Ruiz", "Hughes", "Price", "Alvarez", "Castillo", "Sanders",
    "Patel", "Myers", "Long", "Ross", "Foster", "Jimenez", "Dubois", "Schmidt", "Rossi", "Tanaka", "Petrov", "Haddad",
    "Sharma", "Larsen", "Novak", "Kowalski", "Silva", "Costa", "Müller", "O'Brien"
)
PROFESSIONS = ("actor", "politician", "writer", "singer", "physician", "lawyer", "engineer", "journalist", "painter", "composer",
               "architect", "economist", "historian", "footballer", "businessperson", "diplomat", "philosopher", "film director",
               "mathematician", "chemist", "poet", "military officer", "television presenter", "photographer", "nurse", "judge")
RELIGIONS = ("Catholicism", "Protestantism", "Islam", "Judaism", "Hinduism", "Buddhism", "Eastern Orthodoxy", "Sikhism")

PERSON = Kind(has=("gender>",))
MARRIED = Kind(has=("spouse>",))
PARENT = Kind(has=("children>",))
CHILD = Kind(has=("parents>",))
CITY = Kind(has=("location>",))

PEOPLE_PATHS = (
    # one step
    P("spouse", path(MARRIED, "spouse>"), (("plain", "who is {e} married to?"), ("terse", "spouse of {e}?"),
      ("nested", "the spouse of {e}"))),
    P("parents", path(CHILD, "parents>"), (("plain", "who are the parents of {e}?"), ("possessive", "who are {e}'s mother and father?"))),
    P("children", path(PARENT, "children>"), (("plain", "who are the children of {e}?"), ("terse", "{e}'s kids?"))),
    P("nationality", path(PERSON, "nationality>"), (("plain", "what is the nationality of {e}?"), ("terse", "{e}'s nationality?"),
      ("verbose", "which country is {e} a citizen of?"))),
    P("birthplace", path(PERSON, "place_of_birth>"), (("plain", "where was {e} born?"), ("nested", "the place of birth of {e}"))),
    P("profession", path(PERSON, "profession>"), (("plain", "what does {e} do for a living?"), ("terse", "profession of {e}?"))),
    P("religion", path(PERSON, "religion>"), (("plain", "what religion does {e} follow?"),)),
    P("institution", path(PERSON, "institution>"), (("plain", "where did {e} study?"), ("passive", "at which institution was {e} educated?"))),
    P("born here", path(CITY, "<place_of_birth"), (("plain", "who was born in {e}?"),)),
    # two steps
    P("spouse's nationality", path(MARRIED, "spouse>", "nationality>"), (("nested", "the nationality of the spouse of {e}"),
      ("plain", "what is the nationality of {e}'s spouse?"))),
    P("parents' birthplace", path(CHILD, "parents>", "place_of_birth>"), (("plain", "where were the parents of {e} born?"),
      ("nested", "the place of birth of the parents of {e}"))),
    P("children's profession", path(PARENT, "children>", "profession>"), (("plain", "what do the children of {e} do for a living?"),
      ("nested", "the profession of the children of {e}"))),
    P("grandchildren", path(PARENT, "children>", "children>"), (("plain", "who are the grandchildren of {e}?"),
      ("nested", "the children of the children of {e}"))),
    P("parents-in-law", path(MARRIED, "spouse>", "parents>"), (("plain", "who are the parents of {e}'s spouse?"),
      ("nested", "the parents of the spouse of {e}"))),
    P("country of birth", path(PERSON, "place_of_birth>", "location>"), (("plain", "in which country was {e} born?"),
      ("nested", "the country of the place of birth of {e}"))),
    P("spouse's religion", path(MARRIED, "spouse>", "religion>"), (("plain", "what religion does the spouse of {e} follow?"),)),
    # three steps
    P("parent's spouse's nationality", path(CHILD, "parents>", "spouse>", "nationality>"),
      (("nested", "the nationality of the spouse of the parent of {e}"), ("plain", "what nationality is the spouse of {e}'s parent?"))),
    P("spouse's parents' birthplace", path(MARRIED, "spouse>", "parents>", "place_of_birth>"),
      (("nested", "the place of birth of the parents of the spouse of {e}"), ("plain", "where were the parents of {e}'s spouse born?"))),
    P("children's spouses' profession", path(PARENT, "children>", "spouse>", "profession>"),
      (("nested", "the profession of the spouse of the children of {e}"), ("plain", "what do the spouses of {e}'s children do for a living?"))),
    P("spouse's country of birth", path(MARRIED, "spouse>", "place_of_birth>", "location>"),
      (("nested", "the country of the place of birth of the spouse of {e}"), ("plain", "in which country was the spouse of {e} born?"))),
    P("grandchildren's nationality", path(PARENT, "children>", "children>", "nationality>"),
      (("nested", "the nationality of the children of the children of {e}"), ("plain", "what nationality are the grandchildren of {e}?"))),
)

# Fresh wordings (`wordings=`, kgwalk.eval.devsets.Wordings): the same paths asked in words the dev templates never
# used, to tell how far the dev wordings' figures are the templates' and not the KG's (bench/results/zero_shot_fresh_wordings.md).
PEOPLE_REWORDINGS: Rewordings = {
    "fresh": {
        "spouse": (("plain", "whom did {e} marry?"), ("possessive", "who is {e}'s husband or wife?")),
        "parents": (("verbose", "who is the mother or father of {e}?"), ("plain", "whose child is {e}?")),
        "children": (("verbose", "name the sons and daughters of {e}"), ("possessive", "who are {e}'s offspring?")),
        "nationality": (("plain", "what country is {e} from?"), ("terse", "{e} citizenship?")),
        "birthplace": (("plain", "in what city was {e} born?"), ("possessive", "what is {e}'s birthplace?")),
        "profession": (("possessive", "what is {e}'s job?"), ("verbose", "what kind of work does {e} do?")),
        "religion": (("possessive", "what is {e}'s faith?"), ("plain", "which religion does {e} practise?")),
        "institution": (("plain", "which university did {e} attend?"), ("plain", "where did {e} go to school?")),
        "born here": (("verbose", "name someone whose birthplace is {e}"), ("plain", "which people are from {e}?")),
        "spouse's nationality": (("possessive", "what country is {e}'s husband or wife from?"),
                                 ("verbose", "which citizenship does the person {e} married hold?")),
        "parents' birthplace": (("possessive", "what are the birthplaces of {e}'s parents?"),
                                ("plain", "in what cities were {e}'s mother and father born?")),
        "children's profession": (("possessive", "what jobs do {e}'s kids have?"), ("verbose", "what work do the sons and daughters of {e} do?")),
        "grandchildren": (("possessive", "who are {e}'s grandkids?"), ("plain", "who are the children of {e}'s children?")),
        "parents-in-law": (("verbose", "who are the mother and father of the person {e} married?"), ("possessive", "who are {e}'s in-laws?")),
        "country of birth": (("plain", "what country was {e} born in?"), ("possessive", "{e}'s country of birth?")),
        "spouse's religion": (("possessive", "what is the faith of {e}'s husband or wife?"),),
        "parent's spouse's nationality": (("possessive", "what country is the husband or wife of {e}'s parent from?"),),
        "spouse's parents' birthplace": (("possessive", "where were the mother and father of {e}'s husband or wife born?"),),
        "children's spouses' profession": (("possessive", "what jobs do the husbands and wives of {e}'s kids have?"),),
        "spouse's country of birth": (("possessive", "what country was {e}'s husband or wife born in?"),),
        "grandchildren's nationality": (("possessive", "what country are {e}'s grandkids from?"),),
    },
    "fresh2": {
        "spouse": (("plain", "who did {e} wed?"), ("verbose", "to whom is {e} married?")),
        "parents": (("plain", "who are the mom and dad of {e}?"),),
        "children": (("plain", "what are the names of {e}'s children?"),),
        "nationality": (("plain", "which nation is {e} a citizen of?"),),
        "birthplace": (("plain", "what city is {e} from originally?"), ("terse", "{e} place of birth?")),
        "profession": (("plain", "what is the occupation of {e}?"),),
        "religion": (("plain", "what is the religious affiliation of {e}?"),),
        "institution": (("plain", "where was {e} educated?"),),
        "spouse's nationality": (("plain", "what is the citizenship of the person married to {e}?"),),
        "parents' birthplace": (("plain", "where do {e}'s parents come from?"),),
        "children's profession": (("plain", "what are the occupations of {e}'s children?"),),
        "grandchildren": (("plain", "name the grandchildren of {e}"),),
        "country of birth": (("plain", "which nation was {e} born in?"),),
        "spouse's religion": (("plain", "which faith does the wife or husband of {e} follow?"),),
        "spouse's country of birth": (("plain", "which nation was the partner of {e} born in?"),),
        "grandchildren's nationality": (("plain", "which citizenship do the grandchildren of {e} hold?"),),
        "children's spouses' profession": (("plain", "what are the occupations of the spouses of {e}'s children?"),),
    },
    "fresh3": {
        "spouse": (("plain", "who is {e}'s partner?"),),
        "parents": (("possessive", "who are {e}'s father and mother?"),),
        "children": (("plain", "who are the kids of {e}?"),),
        "nationality": (("possessive", "what is {e}'s citizenship?"),),
        "birthplace": (("plain", "{e} was born in which town?"),),
        "profession": (("plain", "what does {e} do for work?"),),
        "religion": (("plain", "what religion is {e}?"),),
        "institution": (("plain", "where was {e} a student?"),),
        "born here": (("plain", "list people born in {e}"),),
        "spouse's nationality": (("possessive", "what nationality is {e}'s partner?"),),
        "parents' birthplace": (("possessive", "where were {e}'s mother and father born?"),),
        "children's profession": (("possessive", "what professions do {e}'s children have?"),),
        "grandchildren": (("possessive", "list {e}'s grandsons and granddaughters"),),
        "parents-in-law": (("possessive", "who are {e}'s father-in-law and mother-in-law?"),),
        "country of birth": (("plain", "{e} was born in what country?"),),
        "spouse's religion": (("possessive", "what religion does {e}'s spouse follow?"),),
        "parent's spouse's nationality": (("possessive", "which nationality does {e}'s parent's partner have?"),),
        "spouse's parents' birthplace": (("possessive", "where were {e}'s partner's parents born?"),),
        "children's spouses' profession": (("possessive", "what do the partners of {e}'s children work as?"),),
        "spouse's country of birth": (("possessive", "in which country was {e}'s partner born?"),),
        "grandchildren's nationality": (("possessive", "what are the nationalities of {e}'s grandchildren?"),),
    },
    "fresh4": {
        "spouse": (("plain", "{e} is married to whom?"), ("plain", "who is {e} wedded to?")),
        "parents": (("plain", "{e} is the child of whom?"),),
        "children": (("plain", "{e} is the parent of whom?"), ("plain", "which people are children of {e}?")),
        "nationality": (("plain", "{e} holds citizenship of which country?"), ("plain", "what passport does {e} hold?")),
        "birthplace": (("plain", "what is the hometown of {e}?"), ("plain", "what is the birth city of {e}?")),
        "profession": (("possessive", "what is {e}'s line of work?"), ("plain", "{e} works as what?")),
        "religion": (("plain", "what faith does {e} belong to?"), ("plain", "{e} is a follower of which religion?")),
        "institution": (("plain", "which school did {e} graduate from?"), ("plain", "{e} is an alumnus of which institution?")),
        "born here": (("plain", "who is a native of {e}?"), ("plain", "whose place of birth is {e}?")),
        "spouse's nationality": (("possessive", "what is the citizenship of {e}'s spouse?"),
                                 ("possessive", "{e}'s wife or husband holds which nationality?")),
        "parents' birthplace": (("possessive", "what are the hometowns of {e}'s parents?"),),
        "children's profession": (("possessive", "what do {e}'s children work as?"), ("plain", "what are the jobs of the children of {e}?")),
        "grandchildren": (("possessive", "{e}'s children's children?"), ("plain", "list the grandkids of {e}")),
        "parents-in-law": (("plain", "who are the parents of the person married to {e}?"),),
        "country of birth": (("possessive", "which country is {e}'s birthplace in?"),
                             ("possessive", "in which country is {e}'s place of birth located?")),
        "spouse's religion": (("possessive", "what religion is {e}'s spouse?"), ("plain", "what faith is the person married to {e}?")),
        "parent's spouse's nationality": (("possessive", "what is the citizenship of the spouse of {e}'s father or mother?"),),
        "spouse's parents' birthplace": (("possessive", "what are the hometowns of the parents of {e}'s spouse?"),),
        "children's spouses' profession": (("possessive", "what jobs do the people married to {e}'s children have?"),),
        "spouse's country of birth": (("plain", "which country was the person married to {e} born in?"),),
        "grandchildren's nationality": (("plain", "which countries are the grandchildren of {e} citizens of?"),),
    },
    "fresh5": {
        "spouse": (("plain", "who did {e} marry?"), ("terse", "{e} husband or wife")),
        "parents": (("possessive", "who are {e}'s mom and dad?"), ("verbose", "can you tell me the names of the people who raised {e} as their mother and father?")),
        "children": (("plain", "does {e} have any kids, and who are they?"), ("terse", "{e} sons daughters")),
        "nationality": (("plain", "what country is {e} a citizen of?"), ("passive", "which citizenship is held by {e}?")),
        "birthplace": (("terse", "{e} hometown birth city"),),
        "profession": (("possessive", "what did {e} do for a living?"), ("terse", "{e} occupation")),
        "religion": (("plain", "which faith does {e} follow?"), ("possessive", "{e}'s religious belief")),
        "institution": (("plain", "where did {e} go to school or university?"),),
        "born here": (("plain", "which people were born in {e}?"), ("verbose", "list everyone in the database whose place of birth is the city of {e}")),
        "spouse's nationality": (("possessive", "what nationality is {e}'s wife or husband?"), ("nested", "which country is the person married to {e} a citizen of?")),
        "parents' birthplace": (("possessive", "where were {e}'s parents born?"), ("nested", "in which towns were the mother and father of {e} born?")),
        "children's profession": (("plain", "what do {e}'s kids do for work?"), ("nested", "which jobs do the sons and daughters of {e} have?")),
        "grandchildren": (("terse", "grandchildren {e}"),),
        "parents-in-law": (("possessive", "who are {e}'s in-laws (spouse's mom and dad)?"), ("nested", "who are the parents of the person {e} married?")),
        "country of birth": (("nested", "in which country is the city where {e} was born located?"),),
        "spouse's religion": (("plain", "what religion is the person {e} married?"), ("possessive", "{e}'s husband/wife faith")),
        "parent's spouse's nationality": (("nested", "what nationality is the partner of {e}'s mom or dad?"), ("verbose", "take the parents of {e}, find who each of them is married to, and tell me what nationality those spouses have")),
        "spouse's parents' birthplace": (("possessive", "where were {e}'s in-laws born?"), ("nested", "in which city were the parents of the person married to {e} born?")),
        "children's spouses' profession": (("plain", "what do the people {e}'s kids married do for a living?"), ("nested", "what are the occupations of the sons-in-law and daughters-in-law of {e}?")),
        "spouse's country of birth": (("plain", "which country was {e}'s wife or husband born in?"), ("terse", "{e} spouse birth country")),
        "grandchildren's nationality": (("possessive", "what nationality are {e}'s grandkids?"), ("passive", "which citizenship is held by the grandchildren of {e}?")),
    },
    "fresh6": {
        "spouse": (("chatty", "I was reading up on {e} last night and got curious — who did they end up marrying?"),),
        "parents": (("formal", "Could you identify the individuals who are the parents of {e}?"),),
        "children": (("imperative", "List all the kids {e} had."), ("nonnative", "How are called the sons and daughters of {e}?")),
        "nationality": (("quiz", "Which country's passport would {e} have carried? Name it."),),
        "birthplace": (("chatty", "My friend insists {e} is a local from around here, but I doubt it — what town were they actually born in?"),),
        "profession": (("keyword", "{e} occupation job"), ("nonnative", "What is the work that {e} was doing for living?")),
        "religion": (("formal", "To which religious faith did {e} adhere?"), ("short", "What faith did {e} follow?")),
        "institution": (("imperative", "Tell me where {e} went to school or university."), ("quiz", "Name the institution where {e} received an education.")),
        "born here": (("chatty", "I'm visiting {e} next month and love a bit of local trivia — which people were born there?"),
                      ("keyword", "people born in {e}")),
        "spouse's nationality": (("nonnative", "The wife or husband of {e}, from which country is she or he?"), ("keyword", "{e} spouse citizenship")),
        "parents' birthplace": (("formal", "In which places were the parents of {e} born?"),
                                ("chatty", "Doing some genealogy for fun — do you know where {e}'s mother and father were born?")),
        "children's profession": (("imperative", "Give me the occupations of {e}'s kids."), ("short", "What do {e}'s children do for a living?")),
        "grandchildren": (("nonnative", "Who are the children of the children of {e}, the grandkids?"),),
        "parents-in-law": (("keyword", "{e} in-laws"),
                           ("chatty", "Weddings always make me wonder about family ties — who are the parents of the person {e} married?")),
        "country of birth": (("short", "Which country was {e} born in?"), ("formal", "In what country is the town or city of {e}'s birth located?")),
        "spouse's religion": (("imperative", "Tell me what religion {e}'s partner practiced."), ("keyword", "{e} wife husband religion")),
        "parent's spouse's nationality": (("formal", "What is the nationality of the person married to one of {e}'s parents?"),
                                          ("nonnative", "The spouse of the parent of {e} — which nationality this person has?")),
        "spouse's parents' birthplace": (("chatty", "So {e}'s in-laws came from somewhere far, I heard — where were the spouse's parents born?"),
                                         ("keyword", "{e} in-laws birthplace")),
        "children's spouses' profession": (("imperative", "List the jobs of the people {e}'s children married."),
                                           ("quiz", "What occupations do the sons- and daughters-in-law of {e} have?")),
        "spouse's country of birth": (("short", "What country was {e}'s spouse born in?"),
                                      ("nonnative", "In which country was born the husband or wife of {e}?")),
        "grandchildren's nationality": (("keyword", "{e} grandkids nationality"), ("formal", "Of which countries are the grandchildren of {e} citizens?")),
    },
    "fresh7": {
        "spouse": (("who", "Who is {e}'s spouse?"), ("search", "{e} married to"), ("you", "do you know who {e}'s other half is?")),
        "parents": (("which", "Which people are the parents of {e}?"), ("search", "{e} parents"),
                    ("relative", "the mother and father that {e} was born to")),
        "children": (("who", "Who are the sons and daughters of {e}?"), ("search", "children of {e}"), ("you", "do you know the names of {e}'s kids?")),
        "nationality": (("which", "Which nationality does {e} have?"), ("search", "{e} nationality"), ("followup", "and where's {e} a citizen?")),
        "birthplace": (("which", "Which city was {e} born in?"), ("search", "{e} birthplace"), ("relative", "the town where {e} was born")),
        "profession": (("what", "What's {e}'s profession?"), ("search", "{e} profession"), ("you", "do you know what {e} works as?")),
        "religion": (("which", "Which religion does {e} belong to?"), ("search", "{e} religion"), ("followup", "and {e}'s faith?")),
        "institution": (("which", "Which institution did {e} attend?"), ("search", "{e} alma mater"),
                        ("relative", "the school or university where {e} studied")),
        "born here": (("who", "Who are some people born in {e}?"), ("search", "born in {e}"), ("relative", "people whose birthplace is {e}"),
                      ("passive", "Which people were born in the city of {e}?")),
        "spouse's nationality": (("which", "Which nationality does {e}'s spouse hold?"), ("search", "nationality of {e}'s spouse")),
        "parents' birthplace": (("relative", "the places where {e}'s parents were born"),
                                ("you", "do you know the birthplaces of {e}'s mum and dad?")),
        "children's profession": (("which", "Which professions do the children of {e} have?"), ("search", "{e} children professions")),
        "grandchildren": (("who", "Who are {e}'s grandchildren?"), ("search", "grandchildren of {e}"), ("followup", "and {e}'s grandkids?")),
        "parents-in-law": (("who", "Who are {e}'s parents-in-law?"), ("search", "parents of {e}'s spouse")),
        "country of birth": (("search", "{e} birth country"), ("relative", "the country where {e} was born")),
        "spouse's religion": (("which", "Which religion does {e}'s husband or wife belong to?"), ("search", "religion of {e}'s spouse")),
        "parent's spouse's nationality": (("which", "Which nationality does the spouse of {e}'s mother or father have?"),
                                          ("search", "nationality of the person married to {e}'s parent")),
        "spouse's parents' birthplace": (("relative", "the birthplaces of the parents of the person {e} married"),
                                         ("you", "do you know where {e}'s parents-in-law were born?")),
        "children's spouses' profession": (("which", "Which professions do the spouses of {e}'s children have?"),
                                           ("search", "{e} sons-in-law daughters-in-law occupations")),
        "spouse's country of birth": (("relative", "the country where {e}'s spouse was born"),
                                      ("followup", "and {e}'s spouse, what country were they born in?")),
        "grandchildren's nationality": (("which", "Which nationalities do {e}'s grandchildren hold?"),
                                        ("search", "nationality of the grandchildren of {e}")),
    },
    "fresh8": {
        "spouse": (("quiz", "Name the spouse of {e}."), ("fronted", "{e}: married to whom?"), ("indirect", "I wonder who {e} took as a spouse.")),
        "parents": (("exam", "Identify the mother and the father of {e}."), ("fronted", "{e}: who were the parents?"), ("american", "who're {e}'s folks?")),
        "children": (("quiz", "Name every child of {e}."), ("yes-no-wh", "Did {e} have children? Who are they?"), ("fronted", "{e}: sons and daughters?")),
        "nationality": (("exam", "State the nationality of {e}."), ("british", "which country is {e} a national of?"),
                        ("fronted", "{e}: citizen of which country?")),
        "birthplace": (("quiz", "Name the city where {e} was born."), ("fronted", "{e}: born where?"), ("indirect", "I wonder which town {e} was born in.")),
        "profession": (("exam", "State the occupation of {e}."), ("casual", "so what does {e} do, job-wise?"),
                       ("british", "what is {e}'s trade or profession?")),
        "religion": (("quiz", "Name the religion of {e}."), ("fronted", "{e}: follows which religion?"),
                     ("indirect", "I'm curious what {e} believes in, religiously speaking.")),
        "institution": (("exam", "Identify the university or college {e} attended."), ("british", "which uni did {e} go to?"),
                        ("fronted", "{e}: studied at which institution?")),
        "born here": (("yes-no-wh", "Was anyone born in {e}? Who?"), ("fronted", "{e}: which people were born there?"),
                      ("passive", "Who has {e} as their birthplace?")),
        "spouse's nationality": (("possessive-chain", "{e}'s spouse's nationality?"), ("exam", "State the nationality of the person {e} is married to."),
                                 ("indirect", "I wonder which country {e}'s husband or wife is a citizen of.")),
        "parents' birthplace": (("quiz", "Name the birthplaces of {e}'s mother and father."), ("nested-of", "the birthplaces of the parents of {e}"),
                                ("fronted", "{e}: where were the parents born?")),
        "children's profession": (("exam", "Identify the occupations of the children of {e}."), ("casual", "what do {e}'s kids do, job-wise?"),
                                  ("fronted", "{e}: the children work as what?")),
        "grandchildren": (("yes-no-wh", "Does {e} have grandchildren? Who are they?"), ("nested-of", "the kids of the kids of {e}"),
                          ("fronted", "{e}: who are the grandkids?")),
        "parents-in-law": (("exam", "Identify the mother-in-law and father-in-law of {e}."), ("possessive-chain", "{e}'s spouse's parents?"),
                           ("indirect", "I wonder who the parents of {e}'s husband or wife are.")),
        "country of birth": (("quiz", "Name {e}'s country of birth."), ("fronted", "{e}: born in which country?"),
                             ("indirect", "I'd like to know in what country {e} was born.")),
        "spouse's religion": (("possessive-chain", "{e}'s spouse's religion?"), ("exam", "State the religion of the person married to {e}."),
                              ("fronted", "{e}: what religion does the spouse follow?")),
        "parent's spouse's nationality": (("possessive-chain", "{e}'s parent's spouse's nationality?"),
                                          ("nested-of", "the nationality of the husband or wife of a parent of {e}"),
                                          ("exam", "State the nationality held by the spouse of each parent of {e}.")),
        "spouse's parents' birthplace": (("possessive-chain", "{e}'s spouse's parents' birthplaces?"),
                                         ("quiz", "Name the cities where {e}'s father-in-law and mother-in-law were born."),
                                         ("indirect", "I wonder where the mother and father of {e}'s spouse were born.")),
        "children's spouses' profession": (("possessive-chain", "{e}'s children's spouses' professions?"),
                                           ("exam", "Identify the occupations of the people married to the children of {e}."),
                                           ("fronted", "{e}: what do the children's spouses do for a living?")),
        "spouse's country of birth": (("possessive-chain", "{e}'s spouse's country of birth?"),
                                      ("quiz", "Name the country in which the husband or wife of {e} was born."),
                                      ("nested-of", "the birth country of the spouse of {e}")),
        "grandchildren's nationality": (("possessive-chain", "{e}'s grandchildren's nationalities?"),
                                        ("exam", "State the nationalities of the grandchildren of {e}."), ("fronted", "{e}: grandchildren's citizenship?")),
    },
    "fresh9": {
        "spouse": (("kgqa", "{e}'s spouse is who?"), ("wh-end", "{e} tied the knot with whom?"), ("synonym", "who is {e}'s significant other?"),
                   ("long", "I keep seeing {e} mentioned in old family photos with someone — who exactly are they married to?")),
        "parents": (("kgqa", "{e}'s parents are who?"), ("agentive", "which couple is {e} the son or daughter of?"),
                    ("long", "I'm working on a family tree and stuck on one branch: who were the mother and father of {e}?")),
        "children": (("wh-end", "{e} had which children?"), ("agentive", "which people have {e} as a parent?"),
                     ("long", "My grandmother used to mention {e} a lot and I never learned the names of their kids — who are they?")),
        "nationality": (("kgqa", "{e} country of citizenship"), ("wh-end", "{e}'s passport is from which country?"),
                        ("long", "I'm filling in a form about {e} and need one detail: which country are they a citizen of?")),
        "birthplace": (("synonym", "which city does {e} hail from?"), ("wh-end", "{e} came into the world in which city?"),
                       ("long", "I read somewhere that {e} grew up far from where they were born — so what's the actual city of their birth?")),
        "profession": (("kgqa", "what is {e} by profession?"), ("wh-end", "{e} earns a living doing what?"), ("synonym", "what career does {e} have?"),
                       ("long", "Someone at a dinner party brought up {e} and I was too embarrassed to ask — what is it they actually do, career-wise?")),
        "religion": (("wh-end", "{e} is of which faith?"), ("synonym", "what creed does {e} profess?"),
                     ("long", "I'm choosing a holiday gift for {e} and don't want to get it wrong: which religion are they?")),
        "institution": (("agentive", "which school counts {e} among its graduates?"), ("wh-end", "{e} went to college where?"),
                        ("long", "I'm writing a short bio of {e} and need to fill in their education: which university or college did they go to?")),
        "born here": (("wh-end", "{e} is the birthplace of whom?"), ("compound", "{e}-born people"),
                      ("long", "My family comes from {e} and I'd love to know who else started life there — which people were born in that city?")),
        "spouse's nationality": (("kgqa", "{e} spouse country of citizenship"), ("wh-end", "{e} married someone of which nationality?")),
        "parents' birthplace": (("kgqa", "{e} parents place of birth"),
                                ("long", "Tracing my roots back through {e}, I'm stuck a generation up: in which towns were their mother and father born?")),
        "children's profession": (("wh-end", "{e}'s kids ended up in which careers?"), ("agentive", "{e}'s sons and daughters are employed as what?")),
        "grandchildren": (("wh-end", "{e}'s children had which children of their own?"), ("synonym", "who calls {e} grandma or grandpa?")),
        "parents-in-law": (("wh-end", "{e}'s wife or husband is the child of whom?"),
                           ("long", "When {e} got married, who did they gain as a father-in-law and a mother-in-law?")),
        "country of birth": (("synonym", "what is {e}'s native country?"), ("wh-end", "{e} was born in a city in which country?")),
        "spouse's religion": (("agentive", "which religion is followed by {e}'s spouse?"),
                              ("long", "I was told {e} and their partner were brought up differently — what religion does the partner practise?")),
        "parent's spouse's nationality": (("wh-end", "{e}'s parent is married to someone of which nationality?"),
                                          ("long", "I'm curious about {e}'s family background: the person married to their mother or father holds which nationality?")),
        "spouse's parents' birthplace": (("wh-end", "{e}'s father-in-law and mother-in-law were born where?"),
                                         ("compound", "{e}'s parents-in-law's birth cities")),
        "children's spouses' profession": (("agentive", "which professions are held by the husbands and wives of {e}'s children?"),
                                           ("long", "At {e}'s family reunion I met everyone who married one of their kids — what do those spouses do for a living?")),
        "spouse's country of birth": (("synonym", "what is the native country of {e}'s spouse?"),
                                      ("long", "I've heard {e}'s spouse wasn't born locally — which country were they actually born in?")),
        "grandchildren's nationality": (("agentive", "which countries issued the passports of {e}'s grandchildren?"),
                                        ("long", "Curious how international {e}'s family has become: what nationality are their grandchildren?")),
    },
    "fresh10": {
        "spouse": (("terse", "who's {e}'s partner in marriage?"), ("search", "{e} wife husband name"),
                   ("conversational", "{e} got married some years back. Who to?")),
        "parents": (("terse", "{e} was born to whom?"), ("imperative", "tell me the mother and father of {e}"), ("search", "{e} mother father")),
        "children": (("imperative", "list the children of {e}"), ("search", "{e} offspring names"),
                     ("conversational", "{e} is a parent, I believe. What are the kids called?")),
        "nationality": (("terse", "{e}'s country of nationality?"), ("search", "{e} citizenship country"),
                        ("conversational", "I met {e} at a conference. Which country do they hold citizenship of?")),
        "birthplace": (("terse", "{e}'s birth town?"), ("search", "{e} city of birth"), ("imperative", "tell me the city {e} was born in")),
        "profession": (("terse", "{e}'s job title?"), ("search", "{e} career job"),
                       ("conversational", "My neighbour mentioned {e} yesterday. What is their profession?")),
        "religion": (("terse", "religion of {e}?"), ("search", "{e} religious faith"),
                     ("conversational", "{e} is coming to dinner and I want to be respectful. What faith are they?")),
        "institution": (("terse", "{e}'s university?"), ("search", "{e} education university"), ("imperative", "tell me which college {e} studied at")),
        "born here": (("relative", "name the people that were born in {e}"), ("search", "people from {e} by birth"), ("terse", "natives of {e}?")),
        "spouse's nationality": (("nested-of", "what is the citizenship of the partner of {e}?"),
                                 ("relative", "what nationality does the person whom {e} wed have?"),
                                 ("conversational", "{e} married someone from abroad, apparently. What's their nationality?")),
        "parents' birthplace": (("nested-of", "what are the birth cities of the parents of {e}?"), ("search", "{e} parents' home towns"),
                                ("conversational", "I'm researching {e}'s family. Where were their mum and dad born?")),
        "children's profession": (("nested-of", "what is the occupation of each child of {e}?"),
                                  ("relative", "what work do the people that {e} is a parent of do?"), ("search", "{e} sons daughters jobs")),
        "grandchildren": (("nested-of", "who are the sons and daughters of the children of {e}?"),
                          ("relative", "who are the children of the people that {e} is the parent of?"),
                          ("conversational", "{e} is a grandparent now, I hear. Who are the grandchildren?")),
        "parents-in-law": (("nested-of", "who are the mother and father of the spouse of {e}?"), ("relative", "whose child is the person {e} married?"),
                           ("search", "{e} mother-in-law father-in-law")),
        "country of birth": (("nested-of", "what is the country of the birth town of {e}?"),
                             ("relative", "which country contains the town that {e} was born in?"),
                             ("conversational", "{e} moved around a lot as a child. Which country were they originally born in?")),
        "spouse's religion": (("nested-of", "what is the religion of the spouse of {e}?"), ("search", "{e} partner faith"),
                              ("conversational", "{e} got married last year. What faith does the new spouse follow?")),
        "parent's spouse's nationality": (("nested-of", "what is the citizenship of the partner of the mother or father of {e}?"),
                                          ("relative", "what nationality does the person that {e}'s mother or father married hold?"),
                                          ("conversational", "{e}'s parents are both married. What nationality are their spouses?")),
        "spouse's parents' birthplace": (("nested-of", "what are the birth cities of the parents of the partner of {e}?"),
                                         ("relative", "where were the people born whose child {e} married?"), ("search", "{e} spouse parents born city")),
        "children's spouses' profession": (("nested-of", "what are the occupations of the partners of the kids of {e}?"),
                                           ("relative", "what do the people that {e}'s children married work as?"),
                                           ("conversational", "All of {e}'s kids are married now. What jobs do their husbands and wives have?")),
        "spouse's country of birth": (("nested-of", "what is the country of the birthplace of the partner of {e}?"),
                                      ("relative", "in what country lies the city where {e}'s spouse was born?"), ("search", "{e} spouse birth nation")),
        "grandchildren's nationality": (("nested-of", "what is the nationality of the kids of the children of {e}?"),
                                        ("relative", "which countries are the children of {e}'s sons and daughters citizens of?"),
                                        ("imperative", "give me the citizenship of every grandchild of {e}")),
    },
}

PEOPLE_CONJUNCTIONS = (
    Conjunction("profession and birthplace", path(ANY, "<profession"), path(CITY, "<place_of_birth"),
                (("plain", "which {a} was born in {b}?"),)),
    Conjunction("child and birthplace", path(PARENT, "children>"), path(CITY, "<place_of_birth"),
                (("plain", "which child of {a} was born in {b}?"),)),
    Conjunction("nationality and profession", path(ANY, "<nationality"), path(ANY, "<profession"),
                (("plain", "which people from {a} are {b}s?"),)),
)


def unique_name(rng: np.random.Generator, first_names: Sequence[str], surname: Callable[[], str], used: set[str]) -> str:
    """A first name and a surname that no one in `used` has, then in `used`: a namesake takes a middle initial, as real
    namesakes are told apart."""
    while True:
        first, last = str(rng.choice(first_names)), surname()
        name = f"{first} {last}"
        if name in used:
            name = f"{first} {chr(65 + int(rng.integers(26)))}. {last}"
        if name not in used:
            used.add(name)
            return name


def people_kg(seed: int, couples: int = 1500) -> list[tuple[str, str, str]]:
    """The triples of a family KG: `couples` couples in the first generation, their children and grandchildren."""
    rng = np.random.default_rng(seed)
    places = cities_by_country()
    countries = sorted(c for c, cities in places.items() if len(cities) >= 3)
    weights = np.array([len(places[c]) for c in countries], float) ** 0.6
    weights /= weights.sum()
    triples: list[tuple[str, str, str]] = []
    used: set[str] = set()
    institutions = [f"University of {city}" for c in countries[:40] for city in places[c][:2]]

    def person(gender: str, country: str, surname: str) -> str:
        name = unique_name(rng, FIRST[gender], lambda: surname, used)
        home = country if rng.random() < 0.85 else str(rng.choice(countries, p=weights))
        cities = places[home]
        triples.extend([(name, "gender", gender), (name, "nationality", home), (name, "profession", str(rng.choice(PROFESSIONS))),
                        (name, "place_of_birth", cities[min(int(rng.zipf(1.6)) - 1, len(cities) - 1)])])
        if rng.random() < 0.4:
            triples.append((name, "religion", str(rng.choice(RELIGIONS))))
        if rng.random() < 0.3:
            triples.append((name, "institution", str(rng.choice(institutions))))
        return name

    def family(country: str, husband_surname: str, wife_surname: str, generation: int) -> list[str]:
        """A couple and, below the last generation, their children's families; the people it made, the couple first."""
        husband = person("male", country, husband_surname)
        wife = person("female", country, wife_surname)
        surname = husband_surname
        triples.extend([(husband, "spouse", wife), (wife, "spouse", husband)])
        made = [husband, wife]
        if generation < 2:
            for _ in range(int(rng.choice(5, p=[0.15, 0.25, 0.3, 0.2, 0.1]))):
                gender = "male" if rng.random() < 0.5 else "female"
                if rng.random() < 0.6:  # married: a family of their own, the spouse from another one
                    other = str(rng.choice(SURNAMES))
                    kids = family(country, surname, other, generation + 1) if gender == "male" else family(country, other, surname, generation + 1)
                    child = kids[0] if gender == "male" else kids[1]
                    made += kids
                else:
                    child = person(gender, country, surname)
                    made.append(child)
                for parent in (husband, wife):
                    triples.extend([(child, "parents", parent), (parent, "children", child)])
        return made

    for _ in range(couples):
        family(str(rng.choice(countries, p=weights)), str(rng.choice(SURNAMES)), str(rng.choice(SURNAMES)), 0)
    born = {t for _, r, t in triples if r == "place_of_birth"}
    country_of = {city: country for country, cities in places.items() for city in cities}
    triples.extend((city, "location", country_of[city]) for city in sorted(born))
    return list(dict.fromkeys(triples))


FREEBASE = {  # Freebase's spelling: a domain and a type before the property, "spouse_s" for its plural, no "institution"
    "spouse": "people.person.spouse_s", "parents": "people.person.parents", "children": "people.person.children",
    "nationality": "people.person.nationality", "gender": "people.person.gender", "profession": "people.person.profession",
    "place_of_birth": "people.person.place_of_birth", "religion": "people.person.religion", "institution": "people.person.education",
    "location": "location.location.containedby",
}


def people_sets(seed: int, per_path: int, per_conjunction: int, hub_degree: int | None, *,
                      wordings: Wordings = "dev") -> list[DevSet]:
    """people, and people-freebase: the same graph and questions, its relations named as Freebase names them."""
    triples = people_kg(seed)
    questions = generate(Kb(triples), *worded(PEOPLE_PATHS, PEOPLE_CONJUNCTIONS, PEOPLE_REWORDINGS, wordings), seed, per_path, per_conjunction, hub_degree)
    return [DevSet("people", triples, questions, seed, notes=["families over three generations, real first names, surnames and places; "
                                                                "bare-noun relations, parents and children each other's inverse"]),
            DevSet("people-freebase", triples, questions, seed, FREEBASE.__getitem__,
                   notes=["people's graph and questions; Freebase-style relation names (`people.person.spouse_s`)"])]
