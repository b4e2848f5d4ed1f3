"""The team's rules of agreement: the answers and each viewer's view of them (``answers.py``), what an
answer concludes (``results.py``), the judge actor that counts votes and picks the winner
(``judge.py``), and what agents are told about voting (``voting_guidance.py``)."""
