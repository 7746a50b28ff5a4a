#: why a valid call changes the ScriptedChatModel it is given (Sweep.mutates)
SCRIPTED = "a ScriptedChatModel hands out its replies in turn (a real chat model keeps no state)"
