"""The words the pattern rules (guards/patterns.py) are made of, in English, Dutch and German.

Each is a slot of ``guards.patterns.seq``: words separated by spaces, ``_`` joining a phrase's
words, a trailing ``*`` matching as a prefix (``ignor*``: ignore, ignoring, ignoriere).
"""

OVERRIDE_VERBS = ("ignor* disregard* forget* overrid* bypass* contrary_to abweichend* entgegen in_afwijking_van "
                  "don't_listen_to do_not_listen_to hore_nicht_auf hor_nicht_auf luister_niet_naar "
                  "negeer* vergeet vergeten omzeil* ignoreer* "
                  "vergiss* vergesse* missacht* ubergeh* verwirf* beachte_nicht")
EARLIER = ("previous prior above preceding earlier former foregoing initial original all any every "
           "your these those the vorige voorgaande eerdere bovenstaande alle al je jouw de die deze "
           "vorherig* bisherig* obig* vorangegangen* alle allen deine ihre diese")
INSTRUCTIONS = ("instruction* prompt* rule* direction* directive* guideline* guidance command* order* context "
                "constraint* programming restriction* polic* text information* informatie* document* article* "
                "source* artikel* quell* bronnen dokument* knowledge_base kennisbank "
                "instructie* opdracht* regel* aanwijzing* richtlijn* bevel* "
                "anweisung* befehl* regeln vorgabe* instruktion* richtlini* auftr* aufgabe*")
REVEAL_VERBS = ("reveal* show* print* repeat* output* tell give list display* leak* dump* spill* "
                "disclose* write_out recite* what_is what_are what_were respond_with return "
                "toon laat_zien geef herhaal* noem vertel print wat_is wat_zijn "
                "zeig* gib nenne wiederhol* verrat* schreib* was_ist was_sind ausgeben")
# Someone else's, not the twin's ("its system prompt", "hun instructies")
OTHERS = "its their our his her my hun haar onze mijn zijn ihr* sein* unser* mein*"
PROMPT_TARGETS = (
                 "system_prompt systemprompt system_message systeemprompt systeembericht "
                 "initial_prompt initial_instructions original_instructions "
                 "hidden_instructions hidden_prompt secret_instructions developer_message "
                 "pre-prompt preprompt instructions_you_were_given instructions_you_have_been_given "
                 "your_instructions your_prompt your_configuration your_preamble hidden_preamble preamble "
                 "your_initial_instructions your_initial_prompt your_hidden* your_system_prompt "
                 "configuration_text system_instructions the_instructions_you_received "
                 "je_instructies jouw_instructies je_prompt je_regels "
                 "deine_anweisungen ihre_anweisungen deine_instruktionen deinen_prompt deine_regeln")
TASK_VERBS = ("write generate create compose draft produce make provide develop craft "
              "schrijf maak genereer schrijven maken genereren "
              "schreib schreibe erstelle verfasse schreiben erstellen generieren verfassen formuliere formulate")
# Texts some owners write for a living (a copywriter's "can you write a slogan for us?"): a task
# only when ordered, not when asked about.
ORDERED_OBJECTS = ("headline* slogan* tagline* justification* kop koppen begrundung* uberschrift* schlagzeile*")
TASK_OBJECTS = ("essay* poem* stor* song* lyrics homework assignment* thesis paper report cover_letter "
                "blog_post tweet limerick haiku joke* recipe* speech novel* script* program* function* "
                "class code snippet sql_query regex "
                "opstel* gedicht* verhaal verhalen liedje* huiswerk scriptie sollicitatiebrief* mop* recept* "
                "aufsatz* gedicht* geschicht* lied* hausaufgab* bewerbungsschreiben witz* rezept* programm* "
                "funktion*")
