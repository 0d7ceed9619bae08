"""The football development set: a small, dense KG of a tournament's squads, and terse questions
over it ("which club does X play for?", "which goalkeeper plays for Ghana?").

Its shape is the one the other sets lack. Every player has the same five facts, so a player's
walks are many and alike: a walk one step too long ("X club Real Porto country Portugal") shares
its first step with the right one, and every question about a player is one relation among five.
Two-topic questions name two hubs, a club or a national team beside a position, a shirt number or
an age, and the answer is the one player at both. Numbers and ages are bare numerals, and one
numeral is both a shirt number and an age, as literal nodes are in a real KG.

The graph: 32 national teams of 23 players (3 goalkeepers, 8 defenders, 7 midfielders, 5
forwards; shirt numbers 1 to 23, the goalkeepers 1, 12 and 23), each team's coach and the coach's
nationality, each player's club (half from the team's own league where it has one, the rest from
the big leagues) and each club's country. Names are real first names and surnames; clubs are named
after real cities of their league's country (GeoNames, `kgwalk/eval/real_places.py`).
"""

from __future__ import annotations

import numpy as np

from kgwalk.eval.devsets import ANY, Conjunction, DevSet, Kb, Kind, PathQuestions, Rewordings, Wordings, generate, path, worded
from kgwalk.eval.people import FIRST, SURNAMES, unique_name
from kgwalk.eval.real_places import cities_by_country

P = PathQuestions

TEAMS = ("Brazil", "Germany", "Argentina", "Spain", "France", "Italy", "The Netherlands", "Portugal", "Belgium", "Mexico",
         "United States", "Colombia", "Uruguay", "Chile", "Croatia", "Switzerland", "Greece", "Russia", "Japan", "South Korea",
         "Australia", "Iran", "Nigeria", "Ghana", "Ivory Coast", "Cameroon", "Algeria", "Ecuador", "Costa Rica", "Honduras",
         "Bosnia and Herzegovina", "Turkey")
LEAGUES = {"Spain": 20, "United Kingdom": 20, "Germany": 18, "Italy": 20, "France": 20, "Portugal": 14, "The Netherlands": 14,
           "Turkey": 12, "Russia": 12, "Brazil": 16, "Argentina": 14, "Mexico": 12, "United States": 12, "Japan": 10,
           "Belgium": 10, "Greece": 8}  # clubs per league
BIG_LEAGUES = ("Spain", "United Kingdom", "Germany", "Italy", "France")
CLUB_NAMES = ("{} FC", "FC {}", "Real {}", "{} United", "Sporting {}", "Dynamo {}", "AC {}", "Olympique {}", "{} Athletic",
              "{} City", "Racing {}", "Atlético {}")
SQUAD = (("goalkeeper", 3), ("defender", 8), ("midfielder", 7), ("forward", 5))

PLAYER = Kind(has=("position>",))
CLUB = Kind(has=("<club",))
TEAM = Kind(has=("coach>",))
COACH = Kind(has=("<coach",))

FOOTBALL_PATHS = (
    # one step
    P("club", path(PLAYER, "club>"), (("plain", "which club does {e} play for?"), ("terse", "{e}'s club?"),
      ("verbose", "at which football club is {e} under contract?"))),
    P("national team", path(PLAYER, "national_team>"), (("plain", "which country does {e} play for?"),
      ("verbose", "which national team does {e} represent?"), ("terse", "{e}'s national team?"))),
    P("position", path(PLAYER, "position>"), (("plain", "what position does {e} play?"), ("terse", "{e}'s position?"))),
    P("shirt number", path(PLAYER, "shirt_number>"), (("plain", "what number does {e} wear?"),
      ("verbose", "which shirt number does {e} have in the squad?"))),
    P("age", path(PLAYER, "age>"), (("plain", "how old is {e}?"), ("terse", "{e}'s age?"))),
    P("coach", path(TEAM, "coach>"), (("plain", "who is the coach of {e}?"), ("passive", "by whom is {e} coached?"))),
    P("coach's nationality", path(COACH, "nationality>"), (("plain", "what is the nationality of {e}?"), ("terse", "{e}'s nationality?"))),
    P("club's country", path(CLUB, "country>"), (("plain", "in which country is {e} based?"), ("possessive", "{e}'s home country?"))),
    P("club's players", path(CLUB, "<club"), (("plain", "who plays for {e}?"), ("passive", "which players are under contract at {e}?"))),
    # two steps
    P("club's country of a player", path(PLAYER, "club>", "country>"), (("plain", "in which country does {e}'s club play?"),
      ("nested", "the country of the club of {e}"))),
    P("national coach of a player", path(PLAYER, "national_team>", "coach>"), (("plain", "who coaches {e}'s national team?"),
      ("nested", "the coach of the national team of {e}"))),
    P("club teammates", path(PLAYER, "club>", "<club"), (("plain", "which players play at the same club as {e}?"),
      ("possessive", "who are {e}'s club teammates?"))),
    P("national teams at a club", path(CLUB, "<club", "national_team>"), (("plain", "which national teams do the players of {e} play for?"),
      ("nested", "the national teams of the players of {e}"))),
    P("coach's nationality of a team", path(TEAM, "coach>", "nationality>"), (("plain", "what is the nationality of the coach of {e}?"),
      ("possessive", "where is {e}'s coach from?"))),
    # three steps
    P("national coach's nationality", path(PLAYER, "national_team>", "coach>", "nationality>"),
      (("plain", "what is the nationality of the coach of {e}'s national team?"),
       ("nested", "the nationality of the coach of the national team of {e}"))),
    P("club teammates' national teams", path(PLAYER, "club>", "<club", "national_team>"),
      (("plain", "which countries do {e}'s club teammates play for?"), ("nested", "the national teams of the players of the club of {e}"))),
    P("coaches at a club", path(CLUB, "<club", "national_team>", "coach>"),
      (("plain", "who coaches the national teams of the players of {e}?"),)),
)

# Fresh wordings: see people.PEOPLE_REWORDINGS.
FOOTBALL_REWORDINGS: Rewordings = {
    "fresh": {
        "club": (("plain", "what team does {e} play club football for?"), ("verbose", "{e} is signed to which club?")),
        "national team": (("plain", "which nation does {e} represent?"), ("terse", "{e} country?")),
        "position": (("plain", "where on the pitch does {e} play?"), ("possessive", "what is {e}'s role on the field?")),
        "shirt number": (("possessive", "what is {e}'s jersey number?"), ("terse", "{e} number?")),
        "age": (("plain", "what age is {e}?"), ("verbose", "how many years old is {e}?")),
        "coach": (("plain", "who manages {e}?"), ("possessive", "{e}'s head coach?")),
        "coach's nationality": (("plain", "where is {e} from?"), ("plain", "which country does {e} come from?")),
        "club's country": (("plain", "where is {e} located?"), ("verbose", "which country's league does {e} play in?")),
        "club's players": (("plain", "name the players of {e}"), ("possessive", "which footballers are on {e}'s roster?")),
        "club's country of a player": (("possessive", "what country is {e}'s club in?"), ("verbose", "in which nation is the club of {e} located?")),
        "national coach of a player": (("possessive", "who manages {e}'s national side?"), ("possessive", "{e}'s national team coach?")),
        "club teammates": (("plain", "who plays alongside {e} at club level?"), ("possessive", "name {e}'s teammates at his club")),
        "national teams at a club": (("plain", "which countries are the players at {e} from?"),
                                     ("possessive", "what national sides do {e}'s players represent?")),
        "coach's nationality of a team": (("plain", "what nationality is the manager of {e}?"), ("possessive", "{e}'s coach is from which country?")),
        "national coach's nationality": (("possessive", "where is the manager of {e}'s national side from?"),),
        "club teammates' national teams": (("possessive", "which nations do {e}'s teammates at club level represent?"),),
        "coaches at a club": (("plain", "who manages the national sides of the players at {e}?"),),
    },
    "fresh2": {
        "club": (("plain", "for which club does {e} play?"),),
        "national team": (("plain", "what national team is {e} on?"),),
        "position": (("plain", "which position is {e}?"),),
        "shirt number": (("plain", "which number is on {e}'s shirt?"),),
        "age": (("plain", "what is the age of {e}?"),),
        "coach": (("plain", "who is in charge of {e}?"),),
        "club's players": (("plain", "who is on the squad of {e}?"),),
        "club's country of a player": (("plain", "which country is the club of {e} from?"),),
        "national coach of a player": (("plain", "who coaches the country {e} plays for?"),),
        "club teammates": (("plain", "who are the teammates of {e} at his club?"),),
        "coach's nationality of a team": (("plain", "which country is the coach of {e} from?"),),
        "national coach's nationality": (("plain", "which country is the coach of the team {e} represents from?"),),
        "club teammates' national teams": (("plain", "which national teams do the club teammates of {e} represent?"),),
    },
    "fresh3": {
        "club": (("plain", "who does {e} play for at club level?"),),
        "national team": (("plain", "{e} plays for which national team?"),),
        "position": (("plain", "what does {e} play as?"),),
        "shirt number": (("plain", "{e} wears which shirt number?"),),
        "age": (("plain", "{e} is how old?"),),
        "coach": (("plain", "who is the manager of {e}?"),),
        "coach's nationality": (("plain", "what country is {e} a citizen of?"),),
        "club's country": (("plain", "which country is {e} in?"),),
        "club's players": (("plain", "list the squad of {e}"),),
        "club's country of a player": (("possessive", "where is {e}'s club based?"),),
        "national coach of a player": (("plain", "who manages the national team {e} plays for?"),),
        "club teammates": (("possessive", "which players are at {e}'s club?"),),
        "national teams at a club": (("plain", "which national teams have players at {e}?"),),
        "coach's nationality of a team": (("plain", "what country does the coach of {e} come from?"),),
        "national coach's nationality": (("plain", "what nationality is the coach of the national team {e} plays for?"),),
        "club teammates' national teams": (("possessive", "which countries do the players at {e}'s club represent?"),),
        "coaches at a club": (("possessive", "who coaches the national teams of {e}'s players?"),),
    },
    "fresh4": {
        "club": (("plain", "what club is {e} on?"), ("plain", "{e} is a player at which club?")),
        "national team": (("plain", "for which country does {e} play internationally?"),),
        "position": (("plain", "what position is {e} listed at?"), ("plain", "{e} plays in what position?")),
        "shirt number": (("plain", "what is the squad number of {e}?"), ("plain", "what number is {e}?")),
        "age": (("plain", "{e} is what age?"),),
        "coach": (("plain", "who is the head coach of {e}?"), ("plain", "who trains {e}?")),
        "coach's nationality": (("plain", "{e} is from which country?"), ("possessive", "what is {e}'s country of origin?")),
        "club's country": (("plain", "in what country does {e} play its football?"), ("plain", "{e} is a club from which country?")),
        "club's players": (("plain", "who are the players of {e}?"), ("plain", "which footballers play for {e}?")),
        "club's country of a player": (("possessive", "{e}'s club is in which country?"),
                                       ("plain", "which country is the club that {e} plays for located in?")),
        "national coach of a player": (("plain", "who is the head coach of the national team of {e}?"),
                                       ("plain", "who coaches the national side that {e} plays for?")),
        "club teammates": (("plain", "who plays for the same club as {e}?"), ("possessive", "which players are {e}'s teammates at club level?")),
        "national teams at a club": (("possessive", "what countries do {e}'s players represent?"),
                                     ("plain", "the players of {e} play for which national teams?")),
        "coach's nationality of a team": (("possessive", "what is the nationality of {e}'s head coach?"),
                                          ("possessive", "which country is {e}'s manager from?")),
        "national coach's nationality": (("possessive", "which country is the head coach of {e}'s national team from?"),),
        "club teammates' national teams": (("possessive", "which national teams do the players at {e}'s club play for?"),),
        "coaches at a club": (("possessive", "who are the coaches of the national teams that {e}'s players play for?"),),
    },
    "fresh5": {
        "club": (("terse", "{e} current club"),),
        "national team": (("plain", "which country does {e} represent internationally?"), ("possessive", "{e}'s national side")),
        "position": (("terse", "{e} playing position"),),
        "shirt number": (("possessive", "{e}'s jersey number at the world cup"),),
        "age": (("terse", "{e} age"),),
        "coach": (("plain", "who manages the {e} national team?"), ("passive", "by whom is {e} coached at the world cup?")),
        "coach's nationality": (("plain", "where is the manager {e} from?"), ("possessive", "{e}'s nationality as a coach")),
        "club's country": (("plain", "which country is {e} based in?"), ("terse", "{e} club country league")),
        "club's players": (("plain", "which world cup players play for {e}?"), ("verbose", "give me a list of all the squad members at the tournament whose club is {e}")),
        "club's country of a player": (("plain", "in which country does {e} play his club football?"), ("nested", "where is the club that {e} plays for located?")),
        "national coach of a player": (("possessive", "who is {e}'s national team manager?"), ("nested", "who coaches the country that {e} plays for?")),
        "club teammates": (("plain", "who plays at the same club as {e}?"), ("terse", "{e} club teammates")),
        "national teams at a club": (("plain", "which national teams have players from {e}?"), ("nested", "what countries do the players at {e} represent?")),
        "coach's nationality of a team": (("plain", "where is the {e} manager from?"), ("possessive", "{e}'s head coach nationality")),
        "national coach's nationality": (("nested", "what nationality is the manager of the national team {e} plays for?"), ("terse", "{e} national team coach nationality")),
        "club teammates' national teams": (("plain", "what countries do {e}'s club teammates play for?"), ("nested", "which national teams are represented by the guys who share a club with {e}?")),
        "coaches at a club": (("verbose", "which national team coaches have players from {e} in their squads?"), ("nested", "who manages the national teams of the players who play for {e}?")),
    },
    "fresh6": {
        "club": (("short", "Who does {e} play club football for?"),),
        "national team": (("nonnative", "For which country {e} is playing at the World Cup?"), ("quiz", "Name the national side {e} represents.")),
        "position": (("chatty", "Setting up my fantasy team and can't remember — does {e} play up front, in midfield or at the back?"),),
        "shirt number": (("imperative", "Tell me {e}'s squad number."),),
        "age": (("formal", "How old was {e} at the time of the tournament?"),),
        "coach": (("chatty", "Watching the group stage with my dad and we both blanked on it — who's managing {e}?"),
                  ("quiz", "Name the head coach of the {e} national team.")),
        "coach's nationality": (("nonnative", "The coach {e}, he is coming from which country?"),),
        "club's country": (("formal", "In which country is the club {e} based?"),),
        "club's players": (("imperative", "List the {e} players who were called up for the World Cup."),
                           ("chatty", "I support {e} and want to know who to cheer for this summer — which of our players are at the tournament?")),
        "club's country of a player": (("nonnative", "{e} plays his club football in what country?"), ("short", "Which country's league is {e}'s club in?")),
        "national coach of a player": (("formal", "Who coaches the national team for which {e} plays?"), ("keyword", "{e} international manager")),
        "club teammates": (("quiz", "Name the players at the World Cup who share a club with {e}."),),
        "national teams at a club": (("imperative", "Give me every national team that has a {e} player in its squad."),
                                     ("chatty", "Our club {e} sent quite a few guys to the tournament, right? Which countries are they playing for?")),
        "coach's nationality of a team": (("keyword", "{e} coach nationality"), ("nonnative", "The man who coach {e}, what is his country of origin?")),
        "national coach's nationality": (("formal", "What nationality is the coach of the national team that {e} plays for?"),
            ("chatty", "Funny how many teams hire foreign managers — is the boss of {e}'s national side even from that country? Where's he from?")),
        "club teammates' national teams": (("imperative", "List the national teams that {e}'s club teammates play for."),
                                           ("keyword", "{e} club teammates countries")),
        "coaches at a club": (("nonnative", "Players of {e} go to different national teams — who are coaching those teams?"),),
    },
    "fresh7": {
        "club": (("what", "What team is {e} signed with at club level?"), ("search", "{e} club"), ("relative", "the club that {e} is on the books of"),
                 ("request", "I need the club {e} plays for")),
        "national team": (("which", "Which nation has {e} been capped by?"), ("search", "{e} international team"),
                          ("you", "do you know which country {e} plays international football for?")),
        "position": (("what", "What's {e}'s position on the pitch?"), ("search", "{e} position"),
                     ("followup", "and what position is {e} in the lineup?")),
        "shirt number": (("what", "What's {e}'s kit number?"), ("search", "{e} squad number"), ("which", "Which number is printed on {e}'s jersey?")),
        "age": (("search", "{e} how old"), ("you", "do you know {e}'s age?"), ("what", "What age is the player {e}?")),
        "coach": (("who", "Who's the gaffer of {e}?"), ("search", "{e} national team manager"), ("relative", "the manager who runs the {e} side"),
                  ("passive", "{e} are managed by whom?")),
        "coach's nationality": (("what", "What nationality does the coach {e} have?"), ("search", "manager {e} nationality"),
                                ("you", "do you know where the manager {e} comes from?")),
        "club's country": (("which", "Which country does the club {e} play in?"), ("search", "{e} football club country"),
                           ("relative", "the country where {e} is based")),
        "club's players": (("which", "Which footballers are signed to {e}?"), ("search", "{e} players"), ("relative", "the players whose club is {e}"),
                           ("you", "do you know who plays for {e}?")),
        "club's country of a player": (("which", "Which country is {e}'s club side based in?"), ("search", "{e} club country")),
        "national coach of a player": (("who", "Who's the gaffer of {e}'s national team?"),
                                       ("followup", "and who coaches the country {e} represents?")),
        "club teammates": (("which", "Which players share a dressing room with {e} at club level?"), ("search", "players at the same club as {e}")),
        "national teams at a club": (("which", "Which national sides are {e}'s players capped by?"), ("search", "{e} players national teams")),
        "coach's nationality of a team": (("which", "Which nationality is the {e} manager?"), ("you", "do you know where {e}'s gaffer is from?")),
        "national coach's nationality": (("which", "Which country does the coach of {e}'s national side come from?"),
                                         ("search", "nationality of {e}'s national team coach")),
        "club teammates' national teams": (("relative", "the national teams of the players who share a club with {e}"),
                                           ("which", "Which nations are {e}'s clubmates capped by?")),
        "coaches at a club": (("who", "Who are the national team managers of the players at {e}?"), ("search", "national coaches of {e} players")),
    },
    "fresh8": {
        "club": (("quiz", "Name the club {e} plays for."), ("fronted", "{e}: at which club?"),
                 ("british", "who's {e} turning out for at club level these days?")),
        "national team": (("exam", "Identify the national team of {e}."), ("casual", "which country's {e} playing for at the tournament?"),
                          ("fronted", "{e}: international side?")),
        "position": (("quiz", "Name the position {e} plays in."), ("yes-no-wh", "Is {e} a defender or an attacker? What position, exactly?"),
                     ("fronted", "{e}: plays in which position?")),
        "shirt number": (("exam", "State the shirt number worn by {e}."), ("british", "what number's on the back of {e}'s shirt?"),
                         ("fronted", "{e}: which number does he wear?")),
        "age": (("exam", "State the age of {e}."), ("casual", "how old's {e}?"), ("fronted", "{e}: age in years?")),
        "coach": (("exam", "Identify the head coach of {e}."), ("british", "who's the manager in charge of {e}?"), ("fronted", "{e}: who coaches them?")),
        "coach's nationality": (("quiz", "Name the country that the coach {e} is a national of."), ("fronted", "{e}, the coach: what nationality?"),
                                ("indirect", "I wonder what nationality the manager {e} holds.")),
        "club's country": (("exam", "Identify the country the club {e} is located in."), ("fronted", "{e}: club from which country?"),
                           ("casual", "what country is {e} from, as a club?")),
        "club's players": (("quiz", "Name the footballers who play their club football at {e}."), ("fronted", "{e}: who's in the squad?"),
                           ("passive", "Which players are employed by the club {e}?")),
        "club's country of a player": (("possessive-chain", "{e}'s club's country?"), ("exam", "Identify the country in which the club of {e} is located."),
                                       ("fronted", "{e}: his club is based in which country?")),
        "national coach of a player": (("possessive-chain", "{e}'s national team's coach?"), ("quiz", "Name the man who coaches the national side of {e}."),
                                       ("british", "who's the manager of the international side {e} turns out for?")),
        "club teammates": (("yes-no-wh", "Does anyone else at the tournament play for {e}'s club? Who?"), ("nested-of", "the players of the club of {e}"),
                           ("fronted", "{e}: who else is at his club?")),
        "national teams at a club": (("exam", "Identify the countries represented by players of the club {e}."),
                                     ("fronted", "{e}: its players play for which countries?"), ("possessive-chain", "{e}'s players' national teams?")),
        "coach's nationality of a team": (("possessive-chain", "{e}'s coach's nationality?"), ("exam", "State the nationality of the man who coaches {e}."),
                                          ("fronted", "{e}: the manager is from which country?")),
        "national coach's nationality": (("possessive-chain", "{e}'s national team's coach's nationality?"),
                                         ("quiz", "Name the nationality of whoever coaches the national team of {e}."),
                                         ("fronted", "{e}: his national team coach is from which country?")),
        "club teammates' national teams": (("possessive-chain", "{e}'s club teammates' national teams?"),
                                           ("exam", "Identify the national sides of the players who play at the same club as {e}."),
                                           ("nested-of", "the national sides of the clubmates of {e}")),
        "coaches at a club": (("possessive-chain", "{e}'s players' national team coaches?"),
                              ("exam", "Identify the coaches of the national teams that the players of {e} represent."),
                              ("fronted", "{e}: who coaches the national teams its players play for?")),
    },
    "fresh9": {
        "club": (("agentive", "which club pays {e}'s wages?"), ("wh-end", "{e} is contracted to which club?"), ("synonym", "which outfit is {e} with?"),
                 ("long", "I'm filling in my sticker album and I've got {e} but not his club badge — who does he play for in the league?")),
        "national team": (("agentive", "which country called {e} up to its squad?"), ("wh-end", "{e} pulls on the shirt of which country?"),
                          ("long", "Watching the highlights last night I saw {e} score but missed which team he was on — what country was he playing for?")),
        "position": (("kgqa", "{e} position played"), ("wh-end", "{e} lines up in which role?"),
                     ("agentive", "in which position does the manager usually field {e}?")),
        "shirt number": (("kgqa", "{e} shirt number"), ("wh-end", "{e} has which number on his back?"),
                         ("long", "My nephew wants a replica shirt of {e} for his birthday and I need the right number printed — which one does he wear?")),
        "age": (("wh-end", "{e} turned what age this year?"), ("long", "Commentators keep calling {e} a veteran — how old is he really?")),
        "coach": (("agentive", "who have {e} appointed as their coach?"), ("compound", "who is the {e} national team boss?"),
                  ("synonym", "who is calling the shots on the {e} bench?"),
                  ("long", "With the tournament coming up I keep hearing about {e}'s tactics — who's the man in the dugout for them?")),
        "coach's nationality": (("wh-end", "the coach {e} holds a passport from which country?"),
                                ("long", "I always assumed {e} was a local coach for his side — what nationality is he actually?")),
        "club's country": (("wh-end", "{e} is a club based where?"), ("synonym", "which country does the side {e} call home?"),
                           ("long", "I saw {e} on a list of clubs in a continental cup and couldn't tell where they're from — which country is that club in?")),
        "club's players": (("agentive", "who does {e} have on its books?"), ("wh-end", "{e} has which players in its squad?"),
                           ("synonym", "who's in the {e} dressing room?")),
        "club's country of a player": (("synonym", "in which country does {e} ply his trade at club level?"), ("wh-end", "{e} plays for a club in what country?"),
                                       ("long", "{e} moved clubs a while back and I lost track — which country is his current club in?")),
        "national coach of a player": (("agentive", "who selects {e} for the national side?"), ("wh-end", "{e} gets picked for his country by which coach?")),
        "club teammates": (("wh-end", "{e} shares a club with which players?"), ("agentive", "which players does {e}'s club also employ?"),
                           ("long", "{e} must know a few of the other lads at the tournament from his day job — who plays at his club?")),
        "national teams at a club": (("agentive", "which countries have picked {e} players for their squads?"),
                                     ("long", "How international is the squad at {e}? Which countries do its players turn out for?")),
        "coach's nationality of a team": (("wh-end", "the {e} coach is a national of which country?"), ("compound", "the {e} boss hails from which country?")),
        "national coach's nationality": (("kgqa", "{e} national team coach country of citizenship"),
                                         ("wh-end", "the coach who picks {e} for his country holds which nationality?")),
        "club teammates' national teams": (("wh-end", "{e}'s clubmates play international football for which countries?"),
                                           ("long", "{e}'s club has a very mixed dressing room, I'm told — which national teams do the players there represent?")),
        "coaches at a club": (("agentive", "who are the coaches that have called up {e}'s players to their national teams?"),
                              ("wh-end", "the national sides of {e}'s players are coached by whom?")),
    },
    "fresh10": {
        "club": (("terse", "{e} belongs to which club?"), ("search", "{e} club team name"),
                 ("conversational", "I know {e} is at the tournament with his country. But who does he play for week in, week out?")),
        "national team": (("terse", "{e} is in which country's squad?"), ("imperative", "tell me which nation's squad {e} was picked for"),
                          ("search", "{e} country squad")),
        "position": (("terse", "is {e} a keeper, a defender, a midfielder or a forward?"), ("search", "{e} role in the team"),
                     ("conversational", "My son asked me about {e} and I drew a blank. Which position does he fill in the team?")),
        "shirt number": (("imperative", "tell me which number {e} has been given for the tournament"), ("search", "{e} jersey no."),
                         ("nested-of", "what is the number on the shirt of {e}?")),
        "age": (("conversational", "{e} seems to have been around forever. What age would he be now?"), ("search", "{e} years old"),
                ("imperative", "tell me {e}'s age")),
        "coach": (("terse", "who leads {e} from the touchline?"), ("search", "{e} head coach name"),
                  ("imperative", "tell me who coaches the {e} squad")),
        "coach's nationality": (("terse", "coach {e} is from which nation?"), ("search", "{e} coach citizenship"),
                                ("conversational", "{e} coaches one of the teams at the tournament. What is his own nationality?")),
        "club's country": (("terse", "{e} plays its league games in which country?"), ("search", "{e} club nation"),
                           ("conversational", "I've never heard of {e} before. What country does that club come from?")),
        "club's players": (("imperative", "show me the {e} players at the tournament"), ("relative", "which footballers have {e} as the club they play for?"),
                           ("search", "{e} squad list")),
        "club's country of a player": (("nested-of", "which is the home country of the club of {e}?"),
                                       ("relative", "what country is home to the club that employs {e}?"),
                                       ("conversational", "{e} left his home country for a club, I think. In which country is that club?")),
        "national coach of a player": (("nested-of", "who is the coach of the country of {e}?"), ("relative", "who coaches the national side that picked {e}?"),
                                       ("terse", "{e}'s international coach?")),
        "club teammates": (("relative", "which players are at the club where {e} plays?"), ("nested-of", "who are the footballers of the club side of {e}?"),
                           ("conversational", "{e} is at the tournament with his country. Who else from his club is there?")),
        "national teams at a club": (("nested-of", "what are the national teams of the footballers of {e}?"),
                                     ("relative", "which national sides call up players that play for {e}?"), ("search", "{e} players international sides")),
        "coach's nationality of a team": (("nested-of", "which country is the homeland of the coach of {e}?"),
                                          ("conversational", "I'm watching {e} tonight. Is their coach a local? What's his nationality?"),
                                          ("search", "{e} coach's passport country")),
        "national coach's nationality": (("nested-of", "what nationality does the coach of the country of {e} hold?"),
                                         ("relative", "what is the nationality of the man who coaches the team that {e} represents?"),
                                         ("conversational", "{e} plays for his country at the tournament. Where is that team's coach from?")),
        "club teammates' national teams": (("nested-of", "what are the countries of the players at the club of {e}?"),
                                           ("relative", "for which national teams do the footballers that are clubmates of {e} play?"),
                                           ("conversational", "{e} has lots of teammates at his club. Which national teams are they playing for at the tournament?")),
        "coaches at a club": (("nested-of", "who are the coaches of the national teams of the footballers at {e}?"),
                              ("relative", "who coaches the countries that the {e} players play for?"),
                              ("imperative", "give me the coaches in charge of the countries that {e}'s footballers represent")),
    },
}

FOOTBALL_CONJUNCTIONS = (
    Conjunction("club and national team", path(CLUB, "<club"), path(TEAM, "<national_team"),
                (("plain", "which player plays for {a} and for the national team of {b}?"), ("terse", "who plays for {a} and {b}?"))),
    Conjunction("national team and position", path(TEAM, "<national_team"), path(ANY, "<position"),
                (("plain", "which {b} plays for {a}?"), ("plain", "who are the {b}s of {a}?"))),
    Conjunction("national team and shirt number", path(TEAM, "<national_team"), path(ANY, "<shirt_number"),
                (("plain", "who wears number {b} for {a}?"),)),
    Conjunction("club and age", path(CLUB, "<club"), path(ANY, "<age"), (("plain", "which player of {a} is {b} years old?"),)),
)


def football_kg(seed: int) -> list[tuple[str, str, str]]:
    """The triples of a tournament's squads: players, their clubs and national teams, and the teams' coaches."""
    rng = np.random.default_rng(seed)
    places = cities_by_country()
    triples: list[tuple[str, str, str]] = []
    used: set[str] = set(TEAMS) | set(LEAGUES)

    clubs: dict[str, list[str]] = {}
    for league, count in LEAGUES.items():
        cities = places[league]
        clubs[league] = []
        for city in cities:
            name = str(rng.choice(CLUB_NAMES)).format(city)
            if name not in used:
                used.add(name)
                clubs[league].append(name)
                triples.append((name, "country", league))
            if len(clubs[league]) == count:
                break
    abroad = [club for league in BIG_LEAGUES for club in clubs[league]]

    def person() -> str:
        return unique_name(rng, FIRST["male"], lambda: str(rng.choice(SURNAMES)), used)

    for team in TEAMS:
        coach = person()
        nationality = team if rng.random() < 0.7 else str(rng.choice([t for t in TEAMS if t != team]))
        triples.extend([(team, "coach", coach), (coach, "nationality", nationality)])
        numbers = [1, 12, 23, *rng.permutation([n for n in range(2, 23) if n != 12]).tolist()]
        positions = [p for p, count in SQUAD for _ in range(count)]
        for number, position in zip(numbers, positions):
            player = person()
            home = clubs.get(team)
            club = str(rng.choice(home)) if home and rng.random() < 0.5 else str(rng.choice(abroad))
            age = int(np.clip(np.round(rng.normal(27, 3.5)), 19, 39))
            triples.extend([(player, "national_team", team), (player, "club", club), (player, "position", position),
                            (player, "shirt_number", str(number)), (player, "age", str(age))])
    return triples


VERBS = {  # relations named as what their subject does ("Stephen Mendoza plays_as goalkeeper")
    "club": "plays_for_club", "national_team": "plays_for_country", "position": "plays_as", "shirt_number": "wears_number",
    "age": "is_aged", "country": "located_in", "nationality": "citizen_of", "coach": "coached_by",
}


def football_sets(seed: int, per_path: int, per_conjunction: int, hub_degree: int | None, *,
                        wordings: Wordings = "dev") -> list[DevSet]:
    """football, and football-verbs: the same graph and questions, its relations named by verb phrases."""
    triples = football_kg(seed)
    questions = generate(Kb(triples), *worded(FOOTBALL_PATHS, FOOTBALL_CONJUNCTIONS, FOOTBALL_REWORDINGS, wordings), seed, per_path, per_conjunction, hub_degree)
    return [DevSet("football", triples, questions, seed, notes=["a tournament's squads: five facts per player, clubs, national "
                                                                  "teams and coaches; terse questions, two hubs per two-topic question"]),
            DevSet("football-verbs", triples, questions, seed, VERBS.__getitem__,
                   notes=["football's graph and questions; relations named by verb phrases (`plays_as`, `wears_number`)"])]
